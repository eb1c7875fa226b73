// The session audit two ways, in the same run on the same sessions: through the read model (what `nomos audit`
// does: GET /sessions pages, src/cli/audit.ts) and the old way (each session's transcript fetched and counted).
import type { Db } from '../src/ports/db.ts';
import { buildReport, type AuditSession } from '../src/cli/audit-report.ts';
import { fetchSessions } from '../src/cli/audit.ts';
import { getJson } from './latency.ts';

export interface AuditComparison {
  readonly sessions: number;
  readonly readModelSeconds: number;
  readonly transcriptSeconds: number;
  readonly ratio: number;
  /** Sessions whose counts differ between the two ways (should be 0). */
  readonly mismatches: number;
}

// ~150 ms a run at full scale, and runs spread ±15 % on these VMs: fifteen runs steady the median (on the same
// data one session's bench took 168 ms as the median of five, where fifteen runs gave 149 ms, p75 167 ms).
export const READ_MODEL_RUNS = 15;

/** The last_active_at that makes `since` select exactly the `count` most recently active sessions. */
async function sinceForCount(db: Db, count: number): Promise<string> {
  const { rows } = await db.query<{ at: Date }>('SELECT last_active_at AS at FROM sessions ORDER BY last_active_at DESC OFFSET $1 LIMIT 1', [count - 1]);
  const at = rows[0]?.at;
  if (at === undefined) throw new Error(`fewer than ${count} sessions to audit`);
  return at.toISOString();
}

/** The old way: one transcript per session, messages and tool calls counted by the script. */
async function countFromTranscript(base: string, id: string): Promise<Pick<AuditSession, 'message_count' | 'tool_call_count' | 'turn_count'>> {
  const { messages } = await getJson(`${base}/sessions/${id}`);
  let toolCalls = 0;
  let turns = 0;
  for (const message of messages as Array<{ role: string; content: { tool_calls: unknown[] } }>) {
    toolCalls += message.content.tool_calls.length;
    if (message.role === 'assistant') turns += 1;
  }
  return { message_count: messages.length, tool_call_count: toolCalls, turn_count: turns };
}

export async function compareAudits(base: string, db: Db, count: number): Promise<AuditComparison> {
  const since = await sinceForCount(db, count);
  const env = { NOMOS_URL: base };
  // The read-model audit takes tens of milliseconds, where one cold start or a GC pause weighs: the median of
  // READ_MODEL_RUNS runs, after one warm-up run. The transcript walk takes seconds and runs once.
  const runs: number[] = [];
  let sessions: AuditSession[] = [];
  for (let run = 0; run <= READ_MODEL_RUNS; run++) {
    const started = performance.now();
    const fetched = await fetchSessions({ since }, env);
    buildReport(fetched.sessions, fetched.asOfPosition);
    if (run > 0) runs.push((performance.now() - started) / 1000);
    sessions = fetched.sessions;
  }
  const readModelSeconds = runs.sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;

  // The old way is given the session ids for free: only the transcript walk is timed, so the ratio is a lower bound.
  const started = performance.now();
  let mismatches = 0;
  for (const session of sessions) {
    const counted = await countFromTranscript(base, session.id);
    if (counted.message_count !== session.message_count || counted.tool_call_count !== session.tool_call_count || counted.turn_count !== session.turn_count) mismatches++;
  }
  const transcriptSeconds = (performance.now() - started) / 1000;
  return { sessions: sessions.length, readModelSeconds, transcriptSeconds, ratio: transcriptSeconds / readModelSeconds, mismatches };
}
