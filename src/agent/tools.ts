// The tools offered to the model: names and arguments exactly as the contract says, each with a zod schema
// (its JSON Schema is what the model sees, and what its arguments are checked against) and a handler that
// calls the same command layer and read models the HTTP API uses. The built-in agent and external agents over
// MCP (src/mcp/) are offered these same definitions: one definition, two doors.
import { z } from 'zod';
import type { Queryable } from '../ports/db.ts';
import { CommandText, PathText } from '../domain/command-text.ts';
import { EntityLifecycle, EntityType } from '../domain/entity/events.ts';
import { Outcome } from '../domain/session/events.ts';
import { entityCounts, getEntity, listEntities } from '../projections/entities.ts';
import { changedWithoutWriteback, executionCounts, executionsProjection, pendingApprovalCount } from '../projections/executions.ts';
import type { ReadWait } from '../projections/read-wait.ts';
import { listSessions, sessionCounts } from '../projections/sessions.ts';
import { transcriptProjection } from '../projections/transcript.ts';
import type { CommandContext, CommandDeps } from '../commands/context.ts';
import type { ExecutionService } from '../execution/service.ts';
import { executeSessionCommand, runSessionCommand } from '../commands/session.ts';
import type { LlmToolDef } from '../ports/llm.ts';
import { recallToolCall } from './context-recall.ts';
import type { WebReader } from '../ports/web.ts';

export interface ToolServices {
  readonly deps: CommandDeps;
  readonly readDb: Queryable;
  /** Waits until the read models hold a position (read-your-writes). */
  readonly readWait: ReadWait;
  readonly executions: ExecutionService;
  readonly web: WebReader;
  readonly model: string;
  /** Knowledge and relations: wired by the runtime (src/commands/knowledge.ts, src/commands/entity.ts). */
  readonly knowledge: KnowledgeTools;
}

export interface KnowledgeTools {
  search(query: string): Promise<unknown>;
  forEntity(slug: string): Promise<unknown>;
  upsert(input: { kind: 'runbook' | 'investigation' | 'note'; title: string; body: string; about: string[]; tags?: string[] }, sessionId: string, ctx: CommandContext): Promise<unknown>;
  relations(slug: string): Promise<unknown>;
  updateAttributes(slug: string, attributes: Record<string, unknown>, ctx: CommandContext): Promise<unknown>;
  relate(input: { from: string; to: string; type: string }, ctx: CommandContext): Promise<unknown>;
}

export interface ToolCall {
  /** The session the call works in; null for a reader (an auditor over MCP), who has none. */
  readonly sessionId: string | null;
  readonly ctx: CommandContext;
}

/** What a tool does to the world, as MCP clients read it (their meaning is the MCP specification's). */
export interface ToolAnnotations {
  /** It changes nothing: not the fleet, not Nomos's records beyond the audit trail of the call itself. */
  readonly readOnlyHint: boolean;
  /** It may undo or overwrite something (meaningful when not read-only). */
  readonly destructiveHint: boolean;
  /** The same call again changes nothing more. */
  readonly idempotentHint: boolean;
  /** It reaches beyond Nomos's own records: fleet hosts, the web. */
  readonly openWorldHint: boolean;
}

export interface Tool<S extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly description: string;
  readonly schema: S;
  readonly annotations: ToolAnnotations;
  /** It reads the caller's own session: offered to no reader (an auditor over MCP has none). */
  readonly inSession?: true;
  handle(args: z.infer<S>, call: ToolCall, services: ToolServices): Promise<unknown>;
}

const tool = <S extends z.ZodObject>(t: Tool<S>): Tool => t;

const Slug = z.string().min(3).max(200).describe('an entity slug such as host:strong, lxc:rclone or vm:zimaos');
const session = (services: ToolServices, call: ToolCall, command: Parameters<typeof executeSessionCommand>[2]) =>
  executeSessionCommand(services.deps, sessionOf(call), command, call.ctx);

function sessionOf(call: ToolCall): string {
  if (call.sessionId === null) throw new Error('this tool works in a session, and a read-only caller has none');
  return call.sessionId;
}

// The annotations, by kind of tool.
const READS: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const RECORDS: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
const RECORDS_AGAIN: ToolAnnotations = { ...RECORDS, idempotentHint: true };

export const TOOLS: readonly Tool[] = [
  tool({
    name: 'whoami',
    description: 'Who and where you are: agent name, session, model and the time.',
    schema: z.strictObject({}),
    annotations: READS,
    handle: (_a, call, s) =>
      Promise.resolve({
        agent: call.ctx.actor.id,
        // A caller without a session is a reader: an auditor over MCP.
        role: call.sessionId === null ? 'auditor' : call.ctx.actor.role,
        session_id: call.sessionId,
        // An external agent names itself (its MCP handshake); its model is its own business.
        ...(call.ctx.client ? { client: call.ctx.client } : { model: s.model }),
        now: s.deps.clock().toISOString(),
      }),
  }),
  tool({
    name: 'set_goal',
    description: 'Set the goal of this session (one sentence): it becomes the title. Lists recent unfinished sessions to pick up from.',
    schema: z.strictObject({ goal: z.string().min(1).max(10_000) }),
    annotations: RECORDS,
    handle: (a, call, s) => session(s, call, { type: 'set_goal', goal: a.goal }),
  }),
  tool({
    name: 'propose_plan',
    description: 'Propose a plan: a few concrete steps, each optionally with the command and target it will run.',
    schema: z.strictObject({ steps: z.array(z.strictObject({ title: z.string().min(1).max(1_000), command: z.string().max(10_000).optional(), target: z.string().max(200).optional() })).min(1).max(100) }),
    annotations: RECORDS,
    handle: (a, call, s) => session(s, call, { type: 'propose_plan', steps: a.steps }),
  }),
  tool({
    name: 'update_plan_step',
    description: 'Move a step of the current plan: pending → running → done | skipped | failed, in order.',
    schema: z.strictObject({ seq: z.number().int().positive(), status: z.enum(['running', 'done', 'skipped', 'failed']) }),
    annotations: RECORDS_AGAIN,
    handle: (a, call, s) => session(s, call, { type: 'update_plan_step', seq: a.seq, status: a.status }),
  }),
  tool({
    name: 'complete_task',
    description: 'Complete the current task: outcome success, partial or failed, with a summary of what was done and what is left.',
    schema: z.strictObject({ outcome: Outcome, summary: z.string().max(20_000) }),
    annotations: RECORDS,
    handle: async (a, call, s) => {
      const reply = await session(s, call, { type: 'complete_task', outcome: a.outcome, summary: a.summary });
      const reminder = await writebackReminder(s, sessionOf(call), reply.position);
      return reminder ? { ...reply, reminder } : reply;
    },
  }),
  tool({
    name: 'run',
    description: 'Run a shell command on a target (host:NAME, lxc:NAME or vm:NAME). Read-only commands run at once; changes may wait for approval. Answers the output, or pending with an execution_id.',
    schema: z.strictObject({ target: Slug, command: CommandText.min(1) }),
    // An answer of pending or approval_required is not the end: once the execution ends, the built-in agent's
    // reactor (src/agent/reactor.ts) starts a turn that carries on from there; an external agent polls instead.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    handle: (a, call, s) => s.executions.run(sessionOf(call), { target: a.target, command: a.command }, call.ctx),
  }),
  tool({
    name: 'classify_command',
    description: "The verdict and policy decision (allow, ask, deny) run would give, without running it.",
    schema: z.strictObject({ command: CommandText, target: z.string().min(3).max(200).optional() }),
    annotations: READS,
    handle: (a, _call, s) => s.executions.classify(a.command, a.target),
  }),
  tool({
    name: 'get_execution_status',
    description: 'Status and output so far of an execution; says hung when it is stuck in the kernel (do not retry then: inspect).',
    schema: z.strictObject({ execution_id: z.string().min(1).max(200) }),
    annotations: READS,
    handle: async (a, _call, s) => (await s.executions.status(a.execution_id)) ?? { error: `no execution ${a.execution_id}` },
  }),
  tool({
    name: 'get_tool_result',
    description: 'An earlier tool call of this session as recorded: its arguments and result (read an elided result again).',
    schema: z.strictObject({ tool_call_id: z.string().min(1).max(200) }),
    annotations: READS,
    inSession: true,
    handle: (a, call, s) => recallToolCall(s.deps.store, sessionOf(call), a.tool_call_id),
  }),
  tool({
    name: 'inspect_path',
    description: 'mount, df, ls -la and stat of one path on many targets at once, as one table.',
    schema: z.strictObject({ path: PathText, targets: z.array(Slug).min(1).max(50) }),
    annotations: { ...READS, idempotentHint: false, openWorldHint: true },
    handle: (a, call, s) => s.executions.inspectPath(sessionOf(call), a.path, a.targets, call.ctx),
  }),
  tool({
    name: 'list_entities',
    description: 'The fleet inventory: hosts, containers and VMs, optionally of one type or state.',
    schema: z.strictObject({ type: EntityType.optional(), state: EntityLifecycle.optional() }),
    annotations: READS,
    handle: (a, _call, s) => listEntities(s.readDb, { ...(a.type && { type: a.type }), ...(a.state && { state: a.state }) }),
  }),
  tool({
    name: 'get_entity',
    description: 'One entity with its connection data, attributes and (for a host) its guests.',
    schema: z.strictObject({ slug: Slug }),
    annotations: READS,
    handle: async (a, _call, s) => (await getEntity(s.readDb, a.slug)) ?? { error: `${a.slug} is not in the inventory` },
  }),
  tool({
    name: 'get_relations',
    description: 'What an entity is related to, both ways (hosts, mounts, depends_on, …).',
    schema: z.strictObject({ slug: Slug }),
    annotations: READS,
    handle: (a, _call, s) => s.knowledge.relations(a.slug),
  }),
  tool({
    name: 'update_entity_attributes',
    description: 'Record facts about an entity (merged; a null value removes a key).',
    schema: z.strictObject({ slug: Slug, attributes: z.record(z.string().max(200), z.unknown()).refine((a) => JSON.stringify(a).length <= 16_384, 'attributes must be at most 16 KiB as JSON') }),
    annotations: { ...RECORDS_AGAIN, destructiveHint: true },
    handle: (a, call, s) => s.knowledge.updateAttributes(a.slug, a.attributes, call.ctx),
  }),
  tool({
    name: 'create_relationship',
    description: 'Record that one entity relates to another (type: hosts, mounts, depends_on, backs_up, exports_to, …).',
    schema: z.strictObject({ from: Slug, to: Slug, type: z.string().min(1).max(50) }),
    annotations: RECORDS_AGAIN,
    handle: (a, call, s) => s.knowledge.relate({ from: a.from, to: a.to, type: a.type }, call.ctx),
  }),
  tool({
    name: 'get_health_summary',
    description: 'The fleet at a glance: entities by type and state, open sessions, pending approvals, running and recently failed executions.',
    schema: z.strictObject({}),
    annotations: READS,
    handle: (_a, _call, s) => healthSummary(s.readDb),
  }),
  tool({
    name: 'search_knowledge',
    description: 'Full-text search of runbooks, investigations and notes.',
    schema: z.strictObject({ query: z.string().min(1).max(1_000) }),
    annotations: READS,
    handle: (a, _call, s) => s.knowledge.search(a.query),
  }),
  tool({
    name: 'get_entity_knowledge',
    description: 'Knowledge about one entity: runbooks first, then investigations, then notes.',
    schema: z.strictObject({ slug: Slug }),
    annotations: READS,
    handle: (a, _call, s) => s.knowledge.forEntity(a.slug),
  }),
  tool({
    name: 'upsert_knowledge',
    description: 'Write back what you learned: a runbook (reusable procedure), an investigation (a diagnosis) or a note, about the entities it concerns. The same kind and title updates the item.',
    schema: z.strictObject({
      kind: z.enum(['runbook', 'investigation', 'note']),
      title: z.string().min(1).max(300),
      body: z.string().min(1).max(50_000),
      about: z.array(Slug).max(50),
      tags: z.array(z.string().min(1).max(50)).max(20).optional(),
    }),
    annotations: { ...RECORDS_AGAIN, destructiveHint: true },
    handle: (a, call, s) => s.knowledge.upsert({ kind: a.kind, title: a.title, body: a.body, about: a.about, ...(a.tags && { tags: a.tags }) }, sessionOf(call), call.ctx),
  }),
  tool({
    name: 'list_recent_sessions',
    description: 'Recent sessions with their goal, outcome, summary and blocker (outcome success|partial|failed; since like 24h or 7d).',
    schema: z.strictObject({ outcome: Outcome.optional(), since: z.string().regex(/^\d{1,4}[hdm]$/).optional() }),
    annotations: READS,
    handle: async (a, _call, s) => {
      const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
      const since = a.since ? new Date(s.deps.clock().getTime() - Number(a.since.slice(0, -1)) * unit[a.since.slice(-1) as keyof typeof unit]) : undefined;
      const page = await listSessions(s.readDb, { limit: 20, ...(a.outcome && { outcome: a.outcome }), ...(since && { since }) });
      return page.sessions.map((x) => ({ id: x.id, goal: x.goal, status: x.status, outcome: x.outcome, summary: x.summary, blocker: x.blocker, closed_at: x.closed_at }));
    },
  }),
  tool({
    name: 'http_get',
    description: 'GET one page of the public internet (http or https) and read it as text: at most 8 KiB, scripts and markup stripped. Loopback, private and other non-public addresses are refused unless the operator opened them.',
    schema: z.strictObject({ url: z.url({ protocol: /^https?$/ }) }),
    annotations: { ...READS, idempotentHint: false, openWorldHint: true },
    handle: (a, _call, s) => s.web.get(a.url),
  }),
];

const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

/** The JSON Schema of a tool's arguments, generated from its zod schema: what every caller is shown. */
export function argumentsSchema(t: Tool): Record<string, unknown> {
  const { $schema: _drop, ...schema } = z.toJSONSchema(t.schema) as Record<string, unknown>;
  return schema;
}

/** The tool definitions the model is offered, with JSON Schemas generated from the zod schemas. */
export function toolDefinitions(): LlmToolDef[] {
  return TOOLS.map((t) => ({ name: t.name, description: t.description, parameters: argumentsSchema(t) }));
}

/** A schema's refusal, as one line a model (or a person) can act on. */
export function argumentProblems(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ');
}

/** Runs a tool on arguments its schema accepted. A refused rule or an unknown entity is an error to read, never thrown. */
export async function invokeTool(t: Tool, args: Record<string, unknown>, call: ToolCall, services: ToolServices): Promise<{ result: unknown; error: string | null }> {
  try {
    return { result: await t.handle(args, call, services), error: null };
  } catch (error) {
    return { result: null, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * A tool call as the audit trail holds it: requested before it runs (so a watcher sees it start), then its
 * result or error, as the caller is shown it (cut to 4 KiB, the cut marked, by the decider).
 */
export async function recordToolCall(
  deps: CommandDeps,
  call: { sessionId: string; toolCallId: string; name: string; args: Record<string, unknown>; ctx: CommandContext },
  run: () => Promise<{ result: unknown; error: string | null }>,
): Promise<{ result: unknown; error: string | null; position: number }> {
  const { sessionId, toolCallId, name, args, ctx } = call;
  await runSessionCommand(deps, sessionId, { type: 'record_tool_call_requested', tool_call_id: toolCallId, name, args }, ctx);
  const outcome = await run();
  const completed = await runSessionCommand(deps, sessionId, { type: 'record_tool_call_completed', tool_call_id: toolCallId, ...(outcome.error === null ? { result: outcome.result ?? null } : { error: outcome.error }) }, ctx);
  // The completion comes after everything the call wrote: its position is the caller's to read its writes at.
  return { ...outcome, position: completed.position };
}

/**
 * Runs one tool call as the model wrote it. Unknown tools and arguments that do not parse or fit the
 * schema are answered as errors the model can read and correct, never thrown.
 */
export async function callTool(name: string, rawArguments: string, call: ToolCall, services: ToolServices): Promise<{ args: Record<string, unknown>; result: unknown; error: string | null }> {
  let args: Record<string, unknown> = {};
  try {
    const parsed: unknown = rawArguments.trim() === '' ? {} : JSON.parse(rawArguments);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { args, result: null, error: 'the arguments must be a JSON object' };
    args = parsed as Record<string, unknown>;
  } catch {
    return { args: { raw: rawArguments.slice(0, 2_000) }, result: null, error: 'the arguments are not valid JSON' };
  }
  const tool = BY_NAME.get(name);
  if (!tool) return { args, result: null, error: `there is no tool ${name}; the tools are ${[...BY_NAME.keys()].join(', ')}` };
  const checked = tool.schema.safeParse(args);
  if (!checked.success) return { args, result: null, error: argumentProblems(checked.error) };
  return { args, ...(await invokeTool(tool, checked.data, call, services)) };
}

async function healthSummary(db: Queryable): Promise<unknown> {
  const day = new Date(Date.now() - 24 * 3600_000);
  const [entities, sessions, pending, recent] = await Promise.all([entityCounts(db), sessionCounts(db), pendingApprovalCount(db), executionCounts(db, { since: day })]);
  const executions_last_24h = Object.fromEntries(['running', 'failed', 'timed_out'].map((status) => [status, recent.get(status) ?? 0]));
  return { entities, sessions, pending_approvals: pending, executions_last_24h };
}

const REMINDER_WAIT_MS = 2_000;

/** complete_task in a session that changed something but wrote nothing back gets a reminder. */
async function writebackReminder(s: ToolServices, sessionId: string, position: number): Promise<string | null> {
  // The session's executions and tool calls may still be on their way into the read models: wait (briefly) until
  // they hold everything up to this completion, so a command that just ran counts.
  await s.readWait.until(position, REMINDER_WAIT_MS, [executionsProjection.name, transcriptProjection.name]);
  if (!(await changedWithoutWriteback(s.readDb, sessionId))) return null;
  return 'This session changed the fleet but wrote nothing back. Record what you learned with upsert_knowledge (a runbook for a reusable procedure, an investigation for a diagnosis) and update_entity_attributes.';
}
