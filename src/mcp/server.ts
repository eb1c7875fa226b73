// Nomos as an MCP server: the built-in agent's tools (src/agent/tools.ts: the same names, schemas and code),
// the sessions, runbooks and knowledge as resources, and the session-review protocol as a prompt. One server
// object answers one HTTP request (src/api/mcp.ts); what must outlive the request, the client's identity and
// its Nomos session, is in the database (./sessions.ts).
//
// Every call of a writing role is recorded in the client's Nomos session as ToolCallRequested/Completed, with
// the token's actor and the client's name and version in the events' metadata: the sessions list, blockers,
// `nomos audit` and the console cover external agents as they cover the built-in one. A reader (an auditor's
// token) is offered only the tools that read Nomos's own records, and its calls are not recorded: it has no
// session to record them in, and reading is what an auditor does everywhere else without a trace either.
//
// No tool approves: an approval is an operator's act through the console, the CLI or the API, so whatever an
// MCP client offers (elicitation included), an agent's token never approves its own command.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type CallToolResult, CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { Forbidden, RuleViolation } from '../domain/messages.ts';
import type { CommandContext } from '../commands/context.ts';
import { type Tool, type ToolServices, TOOLS, argumentProblems, argumentsSchema, invokeTool, recordToolCall } from '../agent/tools.ts';
import { registerResources } from './resources.ts';
import { registerReviewPrompt } from './review.ts';
import type { McpPrincipal, McpSession, McpSessions } from './sessions.ts';

export const SERVER_INFO = { name: 'nomos', version: '0.1.0' } as const;

const INSTRUCTIONS = `Nomos runs shell commands on a Proxmox fleet (hosts, LXC containers, VMs) for you, through its risk classifier and, where a command changes something, an operator's approval.
- Your calls are recorded in a Nomos session (whoami names it); set_goal first, propose_plan for several steps, complete_task at the end.
- run answers the output, or status pending (poll get_execution_status), or approval_required: an operator must approve it in the Nomos console or CLI. Do not resubmit it; poll get_execution_status with its execution_id, or carry on with something else.
- Read before you act: list_entities, get_entity, get_entity_knowledge, search_knowledge. Write back what you learned with upsert_knowledge.`;

/** Who is calling, as the HTTP layer authenticated them, and the MCP session of the request (null at the handshake). */
export interface McpCaller {
  readonly principal: McpPrincipal;
  readonly session: McpSession | null;
  readonly correlationId: string;
}

/** Arguments every tool accepts over MCP besides its own: attach the call (and the client's later ones) to an existing session. */
const SESSION_ARGUMENT = z.uuid().describe('optional: the Nomos session to work in (an existing one); by default this client works in a session of its own, started at its first call');

export function toolsFor(role: McpPrincipal['role']): readonly Tool[] {
  // A reader gets what reads Nomos's own records: nothing that writes, nor reaches hosts or the web, nor reads a
  // session of its own (it has none).
  return role === 'auditor' ? TOOLS.filter((t) => t.annotations.readOnlyHint && !t.annotations.openWorldHint && t.inSession !== true) : TOOLS;
}

/** The tool list a role is shown, made once: each tool's own JSON Schema, plus session_id for those who work in a session. */
function listing(role: McpPrincipal['role']) {
  const { $schema: _drop, ...sessionArgument } = z.toJSONSchema(SESSION_ARGUMENT);
  return toolsFor(role).map((t) => {
    const schema = argumentsSchema(t);
    const properties = { ...(schema.properties as Record<string, unknown>), ...(role !== 'auditor' && { session_id: sessionArgument }) };
    return { name: t.name, description: t.description, inputSchema: { ...schema, type: 'object' as const, properties }, annotations: t.annotations };
  });
}

const LISTINGS = { operator: listing('operator'), agent: listing('agent'), auditor: listing('auditor') };

export interface McpServerDeps {
  readonly services: ToolServices;
  readonly sessions: McpSessions;
  /** Resolves once the read models hold the log up to `position` (bounded: after a while they are read as they are). */
  readonly caughtUp: (position: number) => Promise<void>;
}

export function buildMcpServer(caller: McpCaller, { services, sessions, caughtUp }: McpServerDeps): McpServer {
  const { role, name: actorId } = caller.principal;
  const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS, capabilities: { tools: { listChanged: false } } });
  const offered = new Map(toolsFor(role).map((t) => [t.name, t]));

  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: LISTINGS[role] }));

  server.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name } = request.params;
    const t = offered.get(name);
    if (t === undefined) {
      const why = TOOLS.some((x) => x.name === name) ? `tool ${name} is not offered to role ${role} (it writes, or reaches hosts or the web)` : `there is no tool ${name}`;
      throw new McpError(ErrorCode.InvalidParams, `${why}; the tools are ${[...offered.keys()].join(', ')}`);
    }
    const { session_id: attachTo, ...raw } = request.params.arguments ?? {};
    const attach = role === 'auditor' || attachTo === undefined ? null : SESSION_ARGUMENT.safeParse(attachTo);
    if (role === 'auditor' && attachTo !== undefined) return toolError(`invalid arguments for ${name}: session_id: role auditor works in no session`);
    if (attach && !attach.success) return toolError(`invalid arguments for ${name}: session_id: ${argumentProblems(attach.error)}`);
    const parsed = t.schema.safeParse(raw);
    // Refused before anything is recorded: the model reads why and calls again (the MCP specification's advice).
    if (!parsed.success) return toolError(`invalid arguments for ${name}: ${argumentProblems(parsed.error)}`);
    if (caller.session === null) throw new McpError(ErrorCode.InvalidRequest, 'initialize first: this request carries no MCP session');

    // Read your writes: what the client's previous call wrote (an execution, a goal) is in the read models this one reads.
    await caughtUp(caller.session.lastPosition);
    // An auditor is never an event's actor: it reads, under the role the tools' own answers (whoami) name.
    const ctx: CommandContext = { actor: { role: role === 'auditor' ? 'system' : role, id: actorId }, client: caller.session.client, correlationId: caller.correlationId };
    if (role === 'auditor') return toolResult(await invokeTool(t, parsed.data, { sessionId: null, ctx }, services), null);
    const deps = services.deps;
    try {
      const sessionId = attach?.success ? await sessions.attach(caller.session, deps, attach.data, ctx) : await sessions.sessionFor(caller.session, deps, ctx);
      const outcome = await recordToolCall(deps, { sessionId, toolCallId: deps.newId(), name, args: parsed.data, ctx }, () => invokeTool(t, parsed.data, { sessionId, ctx }, services));
      await sessions.noteWritten(caller.session.id, outcome.position);
      return toolResult(outcome, sessionId);
    } catch (error) {
      // A session that is not there, was deleted or is another's is the caller's to correct, like any argument.
      if (error instanceof RuleViolation || error instanceof Forbidden) return toolError(`${name}: ${error.message}`);
      throw error;
    }
  });

  // Resources and the prompt read the read models too: what the client wrote last is in them first.
  const readable = () => caughtUp(caller.session?.lastPosition ?? 0);
  registerResources(server, services, readable);
  registerReviewPrompt(server, services, readable);
  return server;
}

function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

/** The tool's answer as JSON text (and as structured content when it is an object), with the session it was recorded in. */
function toolResult(outcome: { result: unknown; error: string | null }, sessionId: string | null): CallToolResult {
  const meta = sessionId === null ? {} : { _meta: { 'nomos/session_id': sessionId } };
  if (outcome.error !== null) return { ...toolError(outcome.error), ...meta };
  const result = outcome.result ?? null;
  const content: CallToolResult['content'] = [];
  const headline = runHeadline(result);
  if (headline !== null) content.push({ type: 'text', text: headline });
  content.push({ type: 'text', text: JSON.stringify(result) });
  const structured = typeof result === 'object' && result !== null && !Array.isArray(result) ? { structuredContent: result as Record<string, unknown> } : {};
  return { content, ...structured, ...meta };
}

/** A run that did not end says what to do next in plain words, before its JSON. */
function runHeadline(result: unknown): string | null {
  if (typeof result !== 'object' || result === null) return null;
  const r = result as { status?: unknown; execution_id?: unknown; approval_id?: unknown; expires_at?: unknown };
  if (r.status === 'approval_required') {
    return `Not run: it needs an operator's approval (approval ${String(r.approval_id)}, until ${String(r.expires_at)}). An operator approves or denies it in the Nomos console or with "nomos approvals approve ${String(r.approval_id)}" (or "nomos approvals deny ${String(r.approval_id)} --reason TEXT"); do not resubmit it. Poll get_execution_status with execution_id ${String(r.execution_id)} to learn when it has run.`;
  }
  if (r.status === 'pending') return `Still running: poll get_execution_status with execution_id ${String(r.execution_id)}.`;
  return null;
}
