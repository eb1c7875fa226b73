// The tools the model is offered: names and arguments exactly as the contract says, JSON Schemas from zod,
// and bad calls answered as errors the model can read rather than thrown.
import { describe, expect, it } from 'vitest';
import { callTool, toolDefinitions } from '../../src/agent/tools.ts';
import { classify } from '../../src/domain/risk/index.ts';

describe('tool definitions', () => {
  const defs = new Map(toolDefinitions().map((d) => [d.name, d]));

  it('offers exactly the contracted tools', () => {
    expect([...defs.keys()].sort()).toEqual(
      [
        'whoami', 'set_goal', 'propose_plan', 'update_plan_step', 'complete_task', 'run', 'classify_command', 'get_execution_status', 'inspect_path',
        'list_entities', 'get_entity', 'get_relations', 'update_entity_attributes', 'create_relationship', 'get_health_summary', 'search_knowledge',
        'get_entity_knowledge', 'upsert_knowledge', 'list_recent_sessions', 'http_get', 'get_tool_result',
      ].sort(),
    );
  });

  it.each([
    ['run', ['target', 'command'], ['target', 'command']],
    ['propose_plan', ['steps'], ['steps']],
    ['upsert_knowledge', ['kind', 'title', 'body', 'about', 'tags'], ['kind', 'title', 'body', 'about']],
    ['list_recent_sessions', ['outcome', 'since'], []],
    ['create_relationship', ['from', 'to', 'type'], ['from', 'to', 'type']],
    ['update_plan_step', ['seq', 'status'], ['seq', 'status']],
    ['whoami', [], []],
  ] as const)('%s takes %j (required %j)', (name, properties, required) => {
    const schema = defs.get(name)!.parameters as { type: string; properties: Record<string, unknown>; required?: string[]; additionalProperties: boolean };
    expect(schema.type).toBe('object');
    expect(Object.keys(schema.properties).sort()).toEqual([...properties].sort());
    expect([...(schema.required ?? [])].sort()).toEqual([...required].sort());
    expect(schema.additionalProperties).toBe(false);
  });

  it('describes propose_plan steps with title, and optional command and target', () => {
    const steps = (defs.get('propose_plan')!.parameters as any).properties.steps.items;
    expect(Object.keys(steps.properties).sort()).toEqual(['command', 'target', 'title']);
    expect(steps.required).toEqual(['title']);
  });
});

describe('callTool', () => {
  const call = { sessionId: 's', ctx: { actor: { role: 'agent' as const, id: 'nomos' } }, awaiting: () => undefined };
  // Bad calls never reach a service: none is needed to prove they are refused.
  const services = {} as Parameters<typeof callTool>[3];

  it.each([
    ['nope', '{}', /no tool nope/],
    ['run', '{"target": "host:x"', /not valid JSON/],
    ['run', '[1]', /must be a JSON object/],
    ['run', '{"target": "host:x"}', /command/],
    ['run', '{"target": "host:x", "command": "ls", "extra": 1}', /extra/],
  ])('%s(%s) is answered with an error the model can read', async (name, args, message) => {
    const outcome = await callTool(name, args, call, services);
    expect(outcome.result).toBeNull();
    expect(outcome.error).toMatch(message);
  });

  it('answers classify_command with the classifier’s verdict', async () => {
    const classifying = { executions: { classify: (command: string) => Promise.resolve(classify(command)) } } as unknown as typeof services;
    const outcome = await callTool('classify_command', '{"command": "rm -rf /data"}', call, classifying);
    expect(outcome.result).toMatchObject({ risk_class: 'destructive' });
  });
});
