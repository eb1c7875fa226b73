// Sessions per day for the charts: a session counts on the (browser-local) day it was last active, the time the
// period filters on, so every session of the period lands on a day inside it.
import type { AuditEntry, AuditOutcome } from '../../../../src/cli/audit-report.ts';
import type { AuditRow } from './sessions.ts';

export const OUTCOMES: readonly AuditOutcome[] = ['success', 'partial', 'failed', 'active'];
/** Longer periods are drawn from their first day with a session, not from an empty start. */
const MAX_EMPTY_LEAD_DAYS = 62;

export interface Day {
  day: string;
  outcomes: Record<AuditOutcome, number>;
  blockers: Record<string, number>;
  total: number;
}

export function localDay(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function nextDay(day: string): string {
  const [y, m, d] = day.split('-').map(Number);
  return localDay(new Date(y ?? 1970, (m ?? 1) - 1, (d ?? 1) + 1));
}

/** Every day from the period's start (or its first session) to today, in order, empty days included. */
export function perDay(rows: readonly AuditRow[], entries: readonly AuditEntry[], start: Date | null, now: Date = new Date()): Day[] {
  const byDay = new Map<string, Day>();
  const empty = (day: string): Day => ({ day, outcomes: { success: 0, partial: 0, failed: 0, active: 0 }, blockers: {}, total: 0 });
  rows.forEach((row, i) => {
    const entry = entries[i];
    if (!entry) return;
    const day = localDay(new Date(row.last_active_at));
    const bucket = byDay.get(day) ?? empty(day);
    bucket.outcomes[entry.outcome] += 1;
    bucket.total += 1;
    if (entry.blocker !== null) bucket.blockers[entry.blocker] = (bucket.blockers[entry.blocker] ?? 0) + 1;
    byDay.set(day, bucket);
  });
  const dataDays = [...byDay.keys()].sort();
  const today = localDay(now);
  const leadLimit = localDay(new Date(now.getTime() - MAX_EMPTY_LEAD_DAYS * 86_400_000));
  let first = start ? localDay(start) : today;
  if (first < leadLimit) first = dataDays[0] ?? today;
  const last = dataDays.at(-1) && dataDays.at(-1)! > today ? dataDays.at(-1)! : today;
  const days: Day[] = [];
  for (let day = first; day <= last; day = nextDay(day)) days.push(byDay.get(day) ?? empty(day));
  return days;
}
