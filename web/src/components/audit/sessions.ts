// Every session of a period, as `nomos audit` reads them: GET /sessions pages of 1000 with only the fields the report
// needs (plus the times the chart and the files use), following next_cursor until the last page.
import { get } from '../../lib/api.ts';
import type { AuditSession } from '../../../../src/cli/audit-report.ts';

export type AuditRow = AuditSession & { created_at: string; last_active_at: string; closed_at: string | null };

interface Page {
  sessions: AuditRow[];
  next_cursor: string | null;
  as_of_position: number;
}

const PAGE_SIZE = 1_000;
// The fields the report reads (AuditSession's): a name the type lacks fails the type check.
const REPORT_FIELDS = [
  'id', 'title', 'goal', 'status', 'outcome', 'blocker', 'message_count', 'user_message_count', 'assistant_message_count',
  'tool_call_count', 'turn_count', 'top_tools', 'input_tokens', 'output_tokens', 'outcome_disputed', 'dispute',
] as const satisfies ReadonlyArray<keyof AuditSession>;
const FIELDS = [...REPORT_FIELDS, 'created_at', 'last_active_at', 'closed_at'].join(',');

/** The report's position is the lowest page's: every page reflected at least that much of the history. */
export async function fetchPeriod(since: string, signal: AbortSignal): Promise<{ rows: AuditRow[]; asOfPosition: number }> {
  const rows: AuditRow[] = [];
  const seen = new Set<string>();
  let asOfPosition = Number.POSITIVE_INFINITY;
  let cursor: string | null = null;
  for (;;) {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE), since, fields: FIELDS });
    if (cursor !== null) query.set('cursor', cursor);
    const page: Page = await get<Page>(`/sessions?${query.toString()}`, { signal });
    rows.push(...page.sessions);
    asOfPosition = Math.min(asOfPosition, page.as_of_position);
    cursor = page.next_cursor;
    if (cursor === null) break;
    // A server that hands back a cursor twice would page forever; better to stop and say so.
    if (seen.has(cursor)) throw new Error(`the server repeated the cursor ${cursor} in GET /sessions; stopped after ${rows.length} sessions`);
    seen.add(cursor);
  }
  return { rows, asOfPosition: Number.isFinite(asOfPosition) ? asOfPosition : 0 };
}
