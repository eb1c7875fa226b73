// How a tool call's arguments and result read in one line: a run says how it ended, anything else is short JSON.
const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);

export function argsLine(args: Record<string, unknown>): string {
  if (typeof args.command === 'string') return `${typeof args.target === 'string' ? `${args.target}: ` : ''}${args.command}`;
  const text = JSON.stringify(args);
  return text === '{}' ? '' : cut(text, 160);
}

export interface ResultSummary {
  tone: 'ok' | 'warn' | 'bad';
  line: string;
  /** Output worth showing in full (a run's stdout/stderr), else the result as JSON. */
  body: string;
}

export function summarize(result: unknown, error: string | null): ResultSummary {
  if (error !== null) return { tone: 'bad', line: `error: ${cut(error, 200)}`, body: '' };
  if (result === undefined) return { tone: 'warn', line: 'running…', body: '' };
  const r = (typeof result === 'object' && result !== null ? result : {}) as Record<string, unknown>;
  if (typeof r.status === 'string' && ('execution_id' in r || 'exit_code' in r || 'approval_id' in r)) {
    const status = r.status;
    const tone = status === 'succeeded' ? 'ok' : ['failed', 'timed_out', 'refused', 'denied', 'expired'].includes(status) ? 'bad' : 'warn';
    const parts = [status.replaceAll('_', ' ')];
    if (typeof r.exit_code === 'number') parts.push(`exit ${r.exit_code}`);
    if (typeof r.reason === 'string') parts.push(r.reason);
    if (status === 'approval_required') parts.push("waiting for an operator's approval");
    const out = [r.stdout, r.stderr, r.detail].filter((v): v is string => typeof v === 'string' && v !== '').join('\n');
    return { tone, line: parts.join(' · '), body: cut(out, 4_000) };
  }
  const json = JSON.stringify(result, null, 2) ?? 'null';
  return { tone: 'ok', line: 'done', body: cut(json, 4_000) };
}
