// The model usage the Audit page shows: the calls made in the period (GET /usage since its start, by model) and,
// where the server prices models, what each listed session cost.
import { get } from '../../lib/api.ts';
import type { UsageAnswer } from '../../lib/types.ts';
import type { AuditRow } from './sessions.ts';

export function periodUsage(since: string, signal: AbortSignal): Promise<UsageAnswer> {
  return get<UsageAnswer>(`/usage?${new URLSearchParams({ since, group_by: 'model' }).toString()}`, { signal });
}

/**
 * Each listed session's cost by id, or null when the server prices no model. A session active in the period may
 * have called the model before it: its calls are read from the earliest start among the sessions, so that every
 * call of every listed session counts (those of other sessions in the answer are not shown).
 */
export async function sessionCosts(usage: UsageAnswer, rows: readonly AuditRow[], signal: AbortSignal): Promise<Map<string, number | null> | null> {
  if (usage.totals.cost === undefined || rows.length === 0) return null;
  const first = rows.reduce((earliest, row) => (row.created_at < earliest ? row.created_at : earliest), rows[0]?.created_at ?? '');
  const bySession = await get<UsageAnswer>(`/usage?${new URLSearchParams({ since: first, group_by: 'session' }).toString()}`, { signal });
  return new Map(bySession.groups.map((group) => [group.key, group.cost ?? null]));
}
