// get_tool_result reads an earlier tool call of the same session back as its events recorded it (the result as
// cut when recorded, with its original size), so a result the fitter elided can be read again; a call the
// session does not hold is an error the model reads.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlEventStore } from '../../src/adapters/eventstore/sql.ts';
import { callTool, recordToolCall, type ToolServices } from '../../src/agent/tools.ts';
import type { CommandContext, CommandDeps } from '../../src/commands/context.ts';
import { runSessionCommand } from '../../src/commands/session.ts';
import { databases, type TestDb } from '../support/databases.ts';

const ctx: CommandContext = { actor: { role: 'agent', id: 'nomos' } };

describe.each(databases)('get_tool_result on $name', (database) => {
  let testDb: TestDb;
  let deps: CommandDeps;
  // The tool reads the event store only.
  let services: ToolServices;
  beforeAll(async () => {
    testDb = await database.open();
    deps = { store: new SqlEventStore(testDb.db), readDb: testDb.db, clock: () => new Date(), newId: randomUUID };
    services = { deps } as unknown as ToolServices;
  });
  afterAll(async () => {
    await deps?.store.close();
    await testDb?.close();
  });

  const started = async (): Promise<string> => {
    const id = randomUUID();
    await runSessionCommand(deps, id, { type: 'start_session', session_id: id }, ctx);
    return id;
  };
  const record = (sessionId: string, toolCallId: string, name: string, args: Record<string, unknown>, outcome: { result: unknown; error: string | null }) =>
    recordToolCall(deps, { sessionId, toolCallId, name, args, ctx }, () => Promise.resolve(outcome));
  const getToolResult = (sessionId: string | null, toolCallId: string) => callTool('get_tool_result', JSON.stringify({ tool_call_id: toolCallId }), { sessionId, ctx }, services);

  it('answers a recorded call with its name, arguments and result', async () => {
    const session = await started();
    const result = { execution_id: 'e1', target: 'lxc:rclone', status: 'failed', exit_code: 1, stdout: 'Jan 1 rclone: permission denied', stderr: '' };
    await record(session, 'call-1', 'run', { target: 'lxc:rclone', command: 'journalctl -u rclone' }, { result, error: null });

    const answer = await getToolResult(session, 'call-1');

    expect(answer.error).toBeNull();
    expect(answer.result).toEqual({ tool_call_id: 'call-1', name: 'run', args: { target: 'lxc:rclone', command: 'journalctl -u rclone' }, status: 'completed', result, error: null, result_original_bytes: null });
  });

  it('answers a result that was cut when recorded as it was kept, with its original size, and an error as recorded', async () => {
    const session = await started();
    const stdout = 'x'.repeat(10_000);
    await record(session, 'big', 'run', { target: 'host:strong', command: 'cat /var/log/syslog' }, { result: { status: 'succeeded', stdout }, error: null });
    await record(session, 'bad', 'get_entity', { slug: 'vm:nope' }, { result: null, error: 'vm:nope is not in the inventory' });

    const big = (await getToolResult(session, 'big')).result as { result: string; result_original_bytes: number };
    expect(big.result_original_bytes).toBe(JSON.stringify({ status: 'succeeded', stdout }).length);
    expect(big.result).toBe(JSON.stringify({ status: 'succeeded', stdout }).slice(0, 4096));
    expect((await getToolResult(session, 'bad')).result).toMatchObject({ name: 'get_entity', status: 'completed', result: null, error: 'vm:nope is not in the inventory' });
  });

  it('answers an unknown id, or another session’s call, with an error the model reads', async () => {
    const mine = await started();
    const theirs = await started();
    await record(theirs, 'their-call', 'whoami', {}, { result: { agent: 'x' }, error: null });

    expect(await getToolResult(mine, 'nope')).toMatchObject({ result: null, error: 'no tool call nope in this session' });
    expect(await getToolResult(mine, 'their-call')).toMatchObject({ result: null, error: 'no tool call their-call in this session' });
    expect(await getToolResult(null, 'their-call')).toMatchObject({ result: null, error: expect.stringMatching(/works in a session/) as string });
  });
});
