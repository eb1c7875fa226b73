// The audit's period: `since` as the CLI takes it (24h, 7d, 30d, or an RFC 3339 time for a custom start), kept in
// the address (#/audit?since=7d), and the instant it stands for, as the server reads it.
export const PRESETS = [
  { since: '24h', label: 'Last 24 hours' },
  { since: '7d', label: 'Last 7 days' },
  { since: '30d', label: 'Last 30 days' },
] as const;
export const DEFAULT_SINCE = '7d';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** The start of the period, or null for text the server would refuse too. Mirrors src/api/since.ts. */
export function periodStart(since: string, now: Date = new Date()): Date | null {
  const duration = /^(\d{1,6})([smhdw])$/.exec(since.trim());
  if (duration) return new Date(Math.max(0, now.getTime() - Number(duration[1]) * UNIT_MS[duration[2] as keyof typeof UNIT_MS]));
  if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(since.trim())) return null;
  const date = new Date(since.trim());
  return Number.isNaN(date.getTime()) ? null : date;
}

/** A Date as a datetime-local input shows it (the browser's time zone, to the minute). */
export function toLocalInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** How the period reads on the page and in a file name. */
export function periodLabel(since: string): string {
  const preset = PRESETS.find((p) => p.since === since);
  if (preset) return preset.label.toLowerCase();
  const start = periodStart(since);
  return start ? `since ${start.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}` : `since ${since}`;
}
