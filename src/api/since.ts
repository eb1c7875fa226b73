// `since` as users write it: an RFC 3339 time, or a duration back from now (30s, 90m, 24h, 7d, 2w).
import { z } from 'zod';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** Nothing is older than this; a longer look back means "everything". */
const EPOCH = new Date(0);

export function parseSince(value: string, now: Date): Date | null {
  const duration = /^(\d{1,6})([smhdw])$/.exec(value.trim());
  if (duration) {
    const since = new Date(now.getTime() - Number(duration[1]) * UNIT_MS[duration[2] as keyof typeof UNIT_MS]);
    return since < EPOCH ? EPOCH : since;
  }
  if (!RFC3339.test(value.trim())) return null;
  const date = new Date(value.trim());
  if (Number.isNaN(date.getTime())) return null;
  return date < EPOCH ? EPOCH : date;
}

/** A query's `since`, parsed: a bad value is refused with how to write it. */
export const SinceQuery = z.string().transform((value, ctx) => {
  const date = parseSince(value, new Date());
  if (date === null) {
    ctx.addIssue({ code: 'custom', message: 'since takes an RFC 3339 time (2026-07-18T09:45:00Z) or a duration (90m, 24h, 7d)' });
    return z.NEVER;
  }
  return date;
});
