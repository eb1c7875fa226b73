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

export function renderTable(header: readonly string[], rows: readonly Row[]): string {
  const lines = [
    ...header,
    '',
    '| metric | figure | target | met |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.metric} | ${r.figure} | ${r.target ?? '—'} | ${r.target === null || r.met === undefined ? '—' : r.met ? '✅' : '❌'} |`),
  ];
  return `${lines.join('\n')}\n`;
}
