// `nomos approvals list | approve ID | deny ID --reason TEXT | watch`: the approvals queue through a running server
// (NOMOS_URL, NOMOS_TOKEN), and the reading of one approval (its rule, reason, time left, who decided it) that the
// chat's approval prompt shares. Deciding stays the API's: this file only asks it and draws its answers.
import { z } from 'zod';
import { RunReply, drawOutcome, outcomeOfRun } from './chat-draw.ts';
import { settleExecution } from './chat-follow.ts';
import { changePositions } from './chat-sse.ts';
import { type ServerClient, ServerRefused, serverClient } from './server-client.ts';

/** The server waits a while for an approved command before it answers; this client waits longer than that. */
export const APPROVE_TIMEOUT_MS = 10 * 60_000;

/** An approval as GET /approvals lists it; read loosely, so a newer server's extra fields do no harm. */
export const ApprovalRow = z.object({
  id: z.string(),
  session_id: z.string(),
  execution_id: z.string(),
  command: z.string(),
  target: z.string(),
  risk_class: z.string(),
  status: z.string(),
  requested_at: z.string(),
  expires_at: z.string(),
  decided_by: z.object({ role: z.string(), id: z.string() }).nullish(),
  decided_at: z.string().nullish(),
  decision_reason: z.string().nullish(),
  verdict: z.object({ reason: z.string(), rule: z.string() }).nullish(),
  rule_id: z.string().nullish(),
  policy_version: z.number().nullish(),
});
export type ApprovalRow = z.infer<typeof ApprovalRow>;

const Listed = z.object({ approvals: z.array(ApprovalRow), as_of_position: z.number() });
const Approved = z.object({ position: z.number(), execution: RunReply.extend({ position: z.number() }) });
const Denied = z.object({ position: z.number() });

/** Time left until `expiresAt`, as a person reads it ("14m 05s", "1h 02m"), or "expired". */
export function timeLeft(expiresAt: string, now = Date.now()): string {
  const s = Math.floor((Date.parse(expiresAt) - now) / 1000);
  if (!(s > 0)) return 'expired';
  const two = (n: number) => String(n).padStart(2, '0');
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${two(Math.floor((s % 3600) / 60))}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m ${two(s % 60)}s`;
  return `${s}s`;
}

/** The rule that asked for it and the policy version in force: "rule_id/vN" (the classifier's rule before policies). */
export function ruleOf(a: ApprovalRow): string {
  const rule = a.rule_id ?? a.verdict?.rule ?? '?';
  return a.policy_version !== null && a.policy_version !== undefined ? `${rule}/v${a.policy_version}` : rule;
}

/** Why it needs an approval, in the classifier's words. */
export const reasonOf = (a: ApprovalRow): string => a.verdict?.reason ?? '';

/** How a decided approval ended, and by whom: "approved by operator:bob", "denied by operator:bob: not now", "expired". */
export function decisionOf(a: ApprovalRow): string {
  const by = a.decided_by ? ` by ${a.decided_by.role}:${a.decided_by.id}` : '';
  switch (a.status) {
    case 'granted':
      return `approved${by}`;
    case 'denied':
      return `denied${by}${a.decision_reason ? `: ${a.decision_reason}` : ''}`;
    case 'expired':
      return 'expired unanswered; nothing ran';
    case 'cancelled':
      return `cancelled${by}${a.decision_reason ? `: ${a.decision_reason}` : ''}; nothing ran`;
    default:
      return a.status;
  }
}

/** How to answer an approval later, from any terminal. */
export const answerLater = (id: string): string => `nomos approvals approve ${id}, or nomos approvals deny ${id} --reason TEXT`;

/** One approval of a session as the read models hold it at `minPosition` or later; null when they hold none. */
export async function readApproval(client: ServerClient, sessionId: string, approvalId: string, minPosition: number): Promise<ApprovalRow | null> {
  const { approvals } = await client.request('GET', `/approvals?session_id=${sessionId}&limit=500&min_position=${minPosition}`, { schema: Listed, what: 'the approvals of the session' });
  return approvals.find((a) => a.id === approvalId) ?? null;
}

const pendingApprovals = (client: ServerClient, minPosition?: number) =>
  client.request('GET', `/approvals?status=pending&limit=500${minPosition === undefined ? '' : `&min_position=${minPosition}`}`, { schema: Listed, what: 'the pending approvals' });

const cut = (text: string, max: number): string => {
  const flat = text.replace(/\s*\n\s*/g, ' ⏎ ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** The pending approvals as a table: a header, then a row each (oldest first); a line saying so when there are none. */
export function approvalsTable(approvals: readonly ApprovalRow[], now = Date.now()): string[] {
  if (approvals.length === 0) return ['no pending approvals'];
  const header = ['ID', 'SESSION', 'COMMAND', 'TARGET', 'RISK', 'RULE', 'REASON', 'EXPIRES IN'];
  const rows = approvals.map((a) => [a.id, a.session_id.slice(0, 8), cut(a.command, 48), a.target, a.risk_class, ruleOf(a), cut(reasonOf(a), 60), timeLeft(a.expires_at, now)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return [line(header), ...rows.map(line)];
}

/** `nomos approvals list`: the pending approvals as a table, or with `json` the server's answer as it came. */
export async function listCommand(options: { json?: boolean }, env: NodeJS.ProcessEnv): Promise<string[]> {
  const reply = await pendingApprovals(serverClient(env));
  return options.json === true ? [JSON.stringify(reply, null, 2)] : approvalsTable(reply.approvals);
}

/**
 * A refusal of the server in one line that names the approval, and for one decided already, how and by whom
 * (read from the newest approvals; the server's words when it is not among them); anything else as it came.
 */
async function named(client: ServerClient, id: string, error: unknown): Promise<Error> {
  if (!(error instanceof ServerRefused)) return error instanceof Error ? error : new Error(String(error));
  const code = ` (${error.status}${error.code ? ` ${error.code}` : ''})`;
  if (error.code === 'approval_decided') {
    const listed = await client.request('GET', '/approvals?limit=500', { schema: Listed, what: 'the approvals' }).catch(() => null);
    const row = listed?.approvals.find((a) => a.id === id);
    if (row) return new Error(`approval ${id} was already ${decisionOf(row)}${row.decided_at ? ` at ${row.decided_at}` : ''}; nothing changed${code}`);
  }
  return new Error(`approval ${id}: ${error.detail}${code}`);
}

/**
 * `nomos approvals approve ID`: approves, then prints how the execution ended, following one still running
 * until it ends (Ctrl-C stops following, not the execution). Lines go to `out` as they come.
 */
export async function approveCommand(id: string, env: NodeJS.ProcessEnv, out: (text: string) => void, signal: AbortSignal): Promise<void> {
  const client = serverClient(env);
  const reply = await client
    .request('POST', `/approvals/${encodeURIComponent(id)}/approve`, { body: {}, schema: Approved, what: `approval ${id}`, timeoutMs: APPROVE_TIMEOUT_MS })
    .catch(async (error: unknown) => {
      throw await named(client, id, error);
    });
  out(`approved ${id}${reply.execution.execution_id ? ` (execution ${reply.execution.execution_id})` : ''}\n`);
  let outcome = outcomeOfRun(reply.execution);
  const executionId = reply.execution.execution_id;
  if (outcome.status === 'pending' && executionId !== undefined) {
    for (const line of drawOutcome(outcome)) out(`  ${line}\n`);
    const settled = await settleExecution(client, executionId, reply.execution.position, out, signal);
    if (settled === null) {
      out(`  (stopped following; GET /executions/${executionId} shows how it ends)\n`);
      return;
    }
    outcome = settled;
  }
  for (const line of drawOutcome(outcome)) out(`  ${line}\n`);
}

/** `nomos approvals deny ID --reason TEXT`: the line to print. */
export async function denyCommand(id: string, reason: string, env: NodeJS.ProcessEnv): Promise<string> {
  const client = serverClient(env);
  await client.request('POST', `/approvals/${encodeURIComponent(id)}/deny`, { body: { reason }, schema: Denied, what: `approval ${id}` }).catch(async (error: unknown) => {
    throw await named(client, id, error);
  });
  return `denied ${id}: ${reason}`;
}

/** A line of `watch`: when it was asked, its id, what and where, its risk, rule and reason, and its time left. */
export function watchLine(a: ApprovalRow, now = Date.now()): string {
  const at = new Date(a.requested_at).toISOString().slice(11, 19);
  return `${at}  ${a.id}  ${cut(a.command, 60)} on ${a.target}  ${a.risk_class} · rule ${ruleOf(a)} · ${cut(reasonOf(a), 80)} · expires in ${timeLeft(a.expires_at, now)}`;
}

/**
 * `nomos approvals watch`: a line for each pending approval, those already waiting first, then each new one as
 * the change feed says the read models moved, until `signal` ends it. Each approval is printed once. An
 * unreachable server at the start is an error; later, the trouble is said on `warn` and the feed reopened.
 */
export async function watchCommand(env: NodeJS.ProcessEnv, out: (text: string) => void, warn: (text: string) => void, signal: AbortSignal): Promise<void> {
  const client = serverClient(env);
  const seen = new Set<string>();
  const show = (approvals: readonly ApprovalRow[]) => {
    for (const a of approvals) {
      if (seen.has(a.id)) continue;
      seen.add(a.id);
      out(`${watchLine(a)}\n`);
    }
  };
  show((await pendingApprovals(client)).approvals);
  warn(`watching for approvals at ${client.base} (Ctrl-C stops)\n`);
  let troubled = false;
  for await (const position of changePositions(client, signal, (why) => {
    if (!troubled) warn(`lost the change feed, trying again: ${why}\n`);
    troubled = true;
  })) {
    try {
      show((await pendingApprovals(client, position ?? undefined)).approvals);
      troubled = false;
    } catch (error) {
      if (signal.aborted) return;
      if (!troubled) warn(`could not read the pending approvals, trying again: ${error instanceof Error ? error.message : String(error)}\n`);
      troubled = true;
    }
  }
}
