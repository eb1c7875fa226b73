// The session-review report `nomos audit` prints: one entry per session in the shape auditors already use
// (Session · Messages · Tool calls · Top tools · Objective · Outcome · Blocker · Severity, and the model's Tokens
// where any were reported), then a summary.
// Pure functions over the GET /sessions rows, so the wording and the arithmetic are tested without a server.
// No zod here: the web console bundles these functions, and the row's schema (checked where rows are read off
// the wire) lives with the CLI's client in audit.ts.

/** The fields of a GET /sessions row the report reads; the rest of the row is ignored. */
export interface AuditSession {
  id: string;
  title: string | null;
  goal: string | null;
  status: 'active' | 'done' | 'failed';
  outcome: 'success' | 'partial' | 'failed' | null;
  blocker: string | null;
  message_count: number;
  user_message_count: number;
  assistant_message_count: number;
  tool_call_count: number;
  turn_count: number;
  top_tools: Array<{ name: string; count: number }>;
  /** Summed over the session's model calls as the provider reported them; null when none were reported. */
  input_tokens: number | null;
  output_tokens: number | null;
  /** A success the log contradicts, with its evidence in words (absent from a server before disputes). */
  outcome_disputed?: boolean | undefined;
  dispute?: { detail: string } | null | undefined;
}

export type AuditOutcome = 'success' | 'partial' | 'failed' | 'active';
export type Severity = 'blocker' | 'friction' | 'cosmetic' | 'none';

const EMOJI: Record<AuditOutcome, string> = { success: '✅', partial: '⚠️', failed: '❌', active: '⏳' };
const SEVERITY: Record<AuditOutcome, Severity> = { failed: 'blocker', partial: 'friction', success: 'cosmetic', active: 'none' };
const TOP_TOOLS = 10;

export interface AuditEntry {
  id: string;
  title: string | null;
  objective: string;
  outcome: AuditOutcome;
  blocker: string | null;
  /** Why the outcome is disputed (closed as success, yet every change failed); null when it is not. */
  dispute: string | null;
  severity: Severity;
  message_count: number;
  user_message_count: number;
  assistant_message_count: number;
  tool_call_count: number;
  turn_count: number;
  top_tools: { name: string; count: number }[];
  input_tokens: number | null;
  output_tokens: number | null;
}

export interface AuditSummary {
  sessions: number;
  outcomes: Record<AuditOutcome, number>;
  /** Sessions per blocker, most frequent first; sessions without a blocker are not counted here. */
  blockers: { blocker: string; count: number }[];
  /** Sessions whose outcome the log contradicts. */
  disputed: number;
  /** Summed from each session's top_tools, which the server caps at five tools per session. */
  top_tools: { name: string; count: number }[];
  /** null when there are no sessions. */
  median_tool_calls: number | null;
  /** Summed over the sessions that have them; null when no session has any reported. */
  input_tokens: number | null;
  output_tokens: number | null;
}

export interface AuditReport {
  sessions: AuditEntry[];
  summary: AuditSummary;
  as_of_position: number;
}

/** A reopened session is active again whatever it ended as before, so status decides first. */
function outcomeOf(session: AuditSession): AuditOutcome {
  return session.status === 'active' || session.outcome === null ? 'active' : session.outcome;
}

export function toEntry(session: AuditSession): AuditEntry {
  const outcome = outcomeOf(session);
  return {
    id: session.id,
    title: session.title,
    objective: session.goal || session.title || '(no goal set)',
    outcome,
    blocker: session.blocker || null,
    dispute: session.outcome_disputed === true ? (session.dispute?.detail ?? 'disputed') : null,
    severity: SEVERITY[outcome],
    message_count: session.message_count,
    user_message_count: session.user_message_count,
    assistant_message_count: session.assistant_message_count,
    tool_call_count: session.tool_call_count,
    turn_count: session.turn_count,
    top_tools: session.top_tools,
    input_tokens: session.input_tokens,
    output_tokens: session.output_tokens,
  };
}

function byCountThenName<T extends { count: number }>(key: (item: T) => string) {
  return (a: T, b: T) => b.count - a.count || key(a).localeCompare(key(b));
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const upper = sorted[mid] ?? 0;
  return sorted.length % 2 === 1 ? upper : ((sorted[mid - 1] ?? 0) + upper) / 2;
}

/** A sum of figures some of which may be unknown: unknown only while every one is. */
const plus = (sum: number | null, value: number | null): number | null => (value === null ? sum : (sum ?? 0) + value);

export function summarize(entries: readonly AuditEntry[]): AuditSummary {
  const outcomes: Record<AuditOutcome, number> = { success: 0, partial: 0, failed: 0, active: 0 };
  const blockers = new Map<string, number>();
  const tools = new Map<string, number>();
  let input: number | null = null;
  let output: number | null = null;
  let disputed = 0;
  for (const entry of entries) {
    outcomes[entry.outcome] += 1;
    if (entry.dispute !== null) disputed += 1;
    input = plus(input, entry.input_tokens);
    output = plus(output, entry.output_tokens);
    if (entry.blocker !== null) blockers.set(entry.blocker, (blockers.get(entry.blocker) ?? 0) + 1);
    for (const tool of entry.top_tools) tools.set(tool.name, (tools.get(tool.name) ?? 0) + tool.count);
  }
  return {
    sessions: entries.length,
    outcomes,
    blockers: [...blockers].map(([blocker, count]) => ({ blocker, count })).sort(byCountThenName((b) => b.blocker)),
    disputed,
    top_tools: [...tools].map(([name, count]) => ({ name, count })).sort(byCountThenName((t) => t.name)).slice(0, TOP_TOOLS),
    median_tool_calls: median(entries.map((e) => e.tool_call_count)),
    input_tokens: input,
    output_tokens: output,
  };
}

export function buildReport(sessions: readonly AuditSession[], asOfPosition: number): AuditReport {
  const entries = sessions.map(toEntry);
  return { sessions: entries, summary: summarize(entries), as_of_position: asOfPosition };
}

const tokens = (input: number | null, output: number | null) => `${input ?? 'n/a'} in · ${output ?? 'n/a'} out`;
const tools = (list: readonly { name: string; count: number }[]) => (list.length === 0 ? 'none' : list.map((t) => `${t.name}:${t.count}`).join(', '));

/**
 * One session, wrapped onto indented lines; every field keeps its label. Tokens follow on a line of their own,
 * only for a session whose model calls reported some (one run by hand through the API has none).
 */
export function formatEntry(entry: AuditEntry): string {
  const reported = entry.input_tokens !== null || entry.output_tokens !== null;
  return [
    `Session: ${entry.id.slice(0, 8)} — "${(entry.title ?? '').slice(0, 60)}"`,
    `  Messages: ${entry.message_count} (${entry.user_message_count}/${entry.assistant_message_count}) · Tool calls: ${entry.tool_call_count} across ${entry.turn_count} turns · Top tools: ${tools(entry.top_tools)}`,
    `  Objective: ${entry.objective}`,
    `  Outcome ${EMOJI[entry.outcome]} (${entry.outcome}) · Blocker: ${entry.blocker ?? 'none'} · Severity: ${entry.severity}`,
    ...(entry.dispute === null ? [] : [`  Outcome disputed: ${entry.dispute}`]),
    ...(reported ? [`  Tokens: ${tokens(entry.input_tokens, entry.output_tokens)}`] : []),
  ].join('\n');
}

export function formatSummary(summary: AuditSummary): string {
  const { outcomes } = summary;
  const blockers = summary.blockers.length === 0 ? 'none' : summary.blockers.map((b) => `${b.blocker}:${b.count}`).join(', ');
  return [
    `Summary: ${summary.sessions} sessions`,
    `  Outcomes: ✅ success ${outcomes.success} · ⚠️ partial ${outcomes.partial} · ❌ failed ${outcomes.failed} · ⏳ active ${outcomes.active}`,
    `  Blockers: ${blockers}`,
    ...(summary.disputed === 0 ? [] : [`  Disputed outcomes: ${summary.disputed} (closed as success, but no change took effect)`]),
    `  Top tools: ${tools(summary.top_tools)}`,
    `  Median tool calls per session: ${summary.median_tool_calls ?? 'n/a'}`,
    `  Tokens: ${summary.input_tokens === null && summary.output_tokens === null ? 'none reported' : tokens(summary.input_tokens, summary.output_tokens)}`,
  ].join('\n');
}

export function formatReport(report: AuditReport): string {
  const header = `Audit as of position ${report.as_of_position}`;
  const entries = report.sessions.map(formatEntry);
  return [header, '', ...entries.flatMap((e) => [e, '']), formatSummary(report.summary)].join('\n');
}
