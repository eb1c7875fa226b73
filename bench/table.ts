// The bench's one markdown table (metric · figure · target · met) and the header lines above it.

export interface Row {
  readonly metric: string;
  readonly figure: string;
  /** Null: no target for this figure. */
  readonly target: string | null;
  readonly met?: boolean;
}

const fmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
export const n = (value: number) => fmt.format(value).replaceAll(',', ' ');
export const ms = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(0)} ms`;
export const s = (value: number) => `${value.toFixed(1)} s`;

/**
 * `judged` false (a smaller scale than the targets are set for): the met column says so instead of ✅/❌, since a
 * figure from a few thousand events says nothing about the target.
 */
export function renderTable(header: readonly string[], rows: readonly Row[], options: { judged: boolean }): string {
  const met = (r: Row) => (r.target === null || r.met === undefined ? '—' : !options.judged ? 'not judged at this scale' : r.met ? '✅' : '❌');
  const lines = [
    ...header,
    '',
    '| metric | figure | target | met |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.metric} | ${r.figure} | ${r.target ?? '—'} | ${met(r)} |`),
  ];
  return `${lines.join('\n')}\n`;
}
