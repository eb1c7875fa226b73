// How times, durations and sizes read on the page.
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return value < 1000 ? `${value} ms` : duration(value / 1000);
}

/** "3 min ago", "in 12 s": relative to `now` (pass a ticking clock to keep it current). */
export function ago(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return '—';
  const delta = Math.round((now - Date.parse(iso)) / 1000);
  const abs = Math.abs(delta);
  const text = abs < 60 ? `${abs} s` : abs < 3600 ? `${Math.floor(abs / 60)} min` : abs < 86400 ? `${Math.floor(abs / 3600)} h` : `${Math.floor(abs / 86400)} d`;
  return delta >= 0 ? `${text} ago` : `in ${text}`;
}

// One formatter for the page: toLocaleString with options builds a new one on every call, which a table of
// timestamps pays for each cell.
const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

export function time(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : DATE_TIME.format(d);
}

const COUNT = new Intl.NumberFormat();
const MONEY = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 6 });

/** A count of tokens or calls in the reader's grouping ("11,000"); '—' when none was reported. */
export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : COUNT.format(n);
}

/** A cost priced by the server (in whatever currency its prices are in), or why there is none. */
export function cost(value: number | null): string {
  return value === null ? 'no price' : MONEY.format(value);
}

export function bytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'null';
}

export function actor(a: { role: string; id?: string | null } | null | undefined): string {
  if (!a) return '—';
  return a.id && a.id !== a.role ? `${a.role}:${a.id}` : a.role;
}
