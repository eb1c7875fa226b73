// How `nomos chat` draws what the agent's tools returned and how an execution ended: pure functions from the
// server's answers (RunReply, inspect_path's table, an execution's row) to lines, so a refusal never reads as ✓.
import { z } from 'zod';

/** How an execution stands, whichever answer told it: a run's reply or GET /executions/:id. */
export interface Outcome {
  status: string;
  exit_code?: number | null | undefined;
  signal?: string | null | undefined;
  stdout?: string | undefined;
  stderr?: string | undefined;
  /** A refusal's reason (unreachable, retry_cap, …). */
  reason?: string | null | undefined;
  /** A refusal's detail, or why a failed run has no exit code (lost). */
  detail?: string | null | undefined;
  execution_id?: string | undefined;
  risk_class?: string | undefined;
}

/** What run returns (RunReply); read loosely, so a newer server's extra fields do no harm. */
export const RunReply = z.object({
  status: z.string(),
  execution_id: z.string().optional(),
  exit_code: z.number().nullish(),
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  reason: z.string().optional(),
  detail: z.string().optional(),
  approval_id: z.string().optional(),
  verdict: z.object({ risk_class: z.string() }).optional(),
});

/** An execution as GET /executions/:id (and the get_execution_status tool) answers it. */
export const ExecutionRow = z.object({
  execution_id: z.string().optional(),
  status: z.string(),
  exit_code: z.number().nullish(),
  signal: z.string().nullish(),
  stdout_tail: z.string().nullish(),
  stderr_tail: z.string().nullish(),
  stdout_so_far: z.string().optional(),
  stderr_so_far: z.string().optional(),
  refusal: z.string().nullish(),
  error: z.string().nullish(),
  advice: z.string().optional(),
  running_ms: z.number().optional(),
  verdict: z.object({ risk_class: z.string() }).optional(),
});

const InspectTable = z.object({
  path: z.string(),
  rows: z.array(z.object({ target: z.string(), status: z.string(), exit_code: z.number().nullable(), output: z.string(), errors: z.string() })),
});

const TAIL_LINES = 8;
const LINE_WIDTH = 160;

export const short = (value: unknown, max = 100): string => {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  const flat = text.replace(/\s*\n\s*/g, ' ⏎ ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** The last lines of a command's output, each marked with the stream it came from. */
export function outputTail(text: string | undefined, label: 'out' | 'err', lines = TAIL_LINES): string[] {
  if (text === undefined || text.trim() === '') return [];
  const all = text.replace(/\n+$/, '').split('\n');
  const kept = all.slice(-lines).map((line) => `  ${label}│ ${line.length > LINE_WIDTH ? `${line.slice(0, LINE_WIDTH - 1)}…` : line}`);
  return all.length > lines ? [`  ${label}│ … ${all.length - lines} earlier lines`, ...kept] : kept;
}

const exitOf = (o: Outcome): string => (o.exit_code !== undefined && o.exit_code !== null ? `exit ${o.exit_code}` : o.signal ? `signal ${o.signal}` : 'no exit code');

/** An execution's state in one headline, then the tail of what it printed. */
export function drawOutcome(o: Outcome): string[] {
  const tails = [...outputTail(o.stdout, 'out'), ...outputTail(o.stderr, 'err')];
  const why = o.detail ? `: ${short(o.detail, 300)}` : '';
  switch (o.status) {
    case 'succeeded':
      return [`✓ succeeded · ${exitOf(o)}`, ...tails];
    case 'failed':
      return [`✗ failed · ${exitOf(o)}${why}`, ...tails];
    case 'timed_out':
      return [`✗ timed out (ended at the hard limit)${why}`, ...tails];
    case 'refused':
      return [`✗ refused (${o.reason ?? 'no reason given'})${why}`];
    case 'pending':
    case 'requested':
    case 'approved':
    case 'running':
      return [`… ${o.status === 'pending' ? 'pending' : o.status}: still running${o.execution_id ? ` (execution ${o.execution_id})` : ''}`, ...tails];
    case 'hung':
      return [`⚠ hung: no output and the process is in uninterruptible sleep${why}`, ...tails];
    case 'approval_required':
    case 'awaiting_approval':
      return [`⏸ waiting for an operator's approval${o.risk_class ? ` (${o.risk_class})` : ''}`];
    case 'denied':
      return [`✗ denied${why}`];
    case 'expired':
      return ['✗ the approval expired; nothing ran'];
    case 'cancelled':
      return [`✗ cancelled; nothing ran${why}`];
    default:
      return [`? ${o.status}${why}`, ...tails];
  }
}

export function outcomeOfRun(reply: z.infer<typeof RunReply>): Outcome {
  return {
    status: reply.status,
    exit_code: reply.exit_code,
    stdout: reply.stdout,
    stderr: reply.stderr,
    reason: reply.reason,
    detail: reply.detail,
    execution_id: reply.execution_id,
    risk_class: reply.verdict?.risk_class,
  };
}

export function outcomeOfExecution(row: z.infer<typeof ExecutionRow>): Outcome {
  return {
    status: row.status,
    exit_code: row.exit_code,
    signal: row.signal,
    stdout: row.stdout_tail ?? row.stdout_so_far,
    stderr: row.stderr_tail ?? row.stderr_so_far,
    reason: row.refusal,
    detail: row.advice ?? row.error,
    execution_id: row.execution_id,
    risk_class: row.verdict?.risk_class,
  };
}

/**
 * A tool call's result as lines (the first one a headline). Drawn from the result's data: run's and
 * inspect_path's answers by their status; a result the server cut to 4 KiB (a string) by the status it names.
 */
export function drawToolResult(name: string | undefined, result: unknown, error: string | null | undefined): string[] {
  if (typeof error === 'string' && error !== '') return [`✗ ${short(error, 300)}`];
  if (name === 'run' || name === 'get_execution_status') {
    const reply = name === 'run' ? RunReply.safeParse(result) : null;
    if (reply?.success) return drawOutcome(outcomeOfRun(reply.data));
    const row = name === 'get_execution_status' ? ExecutionRow.safeParse(result) : null;
    if (row?.success) return drawOutcome(outcomeOfExecution(row.data));
    const named = typeof result === 'string' ? /"status":"(\w+)"/.exec(result)?.[1] : undefined;
    if (named !== undefined) return [`${drawOutcome({ status: named })[0] ?? named} (result cut short)`];
  }
  if (name === 'inspect_path') {
    const table = InspectTable.safeParse(result);
    if (table.success) return drawInspect(table.data);
  }
  if (typeof result === 'object' && result !== null && 'error' in result && typeof result.error === 'string') return [`✗ ${short(result.error, 300)}`];
  return [`✓ ${short(result)}`];
}

function drawInspect(table: z.infer<typeof InspectTable>): string[] {
  const failed = table.rows.filter((row) => row.status !== 'succeeded');
  const where = `${table.path} on ${table.rows.length} target${table.rows.length === 1 ? '' : 's'}`;
  if (failed.length === 0) return [`✓ ${where}`];
  return [
    `✗ ${where}: ${failed.length} did not succeed`,
    ...failed.map((row) => `    ${row.target}: ${row.status}${row.exit_code !== null ? ` · exit ${row.exit_code}` : ''}${row.errors ? ` · ${short(row.errors, 120)}` : ''}`),
  ];
}
