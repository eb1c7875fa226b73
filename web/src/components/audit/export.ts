// The period's listing as files: CSV (RFC 4180: a header row, CRLF, fields with commas, quotes or line breaks
// quoted, quotes doubled; formulas defused) and JSON (the `nomos audit --json` report), built here and saved through a Blob.
import type { AuditReport } from '../../../../src/cli/audit-report.ts';
import type { AuditRow } from './sessions.ts';

const COLUMNS = [
  'id', 'title', 'objective', 'outcome', 'blocker', 'severity', 'message_count', 'user_message_count', 'assistant_message_count',
  'tool_call_count', 'turn_count', 'top_tools', 'created_at', 'last_active_at', 'closed_at', 'input_tokens', 'output_tokens', 'dispute',
] as const;

/**
 * A text that a spreadsheet would take for a formula (=, +, -, @, tab or CR first) gets a leading apostrophe:
 * titles and goals are written by agents, and an auditor opening the file must not run what one wrote.
 */
export function csvField(value: string | number | null): string {
  const raw = value === null ? '' : String(value);
  const text = typeof value === 'string' && /^[=+\-@\t\r]/.test(value) ? `'${raw}` : raw;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One line per session, in the report's order; top_tools as "run:2 get_entity:1". */
export function toCsv(report: AuditReport, rows: readonly AuditRow[]): string {
  const lines = [COLUMNS.join(',')];
  report.sessions.forEach((entry, i) => {
    const row = rows[i];
    const cells: Record<(typeof COLUMNS)[number], string | number | null> = {
      ...entry,
      top_tools: entry.top_tools.map((t) => `${t.name}:${t.count}`).join(' '),
      created_at: row?.created_at ?? null,
      last_active_at: row?.last_active_at ?? null,
      closed_at: row?.closed_at ?? null,
    };
    lines.push(COLUMNS.map((c) => csvField(cells[c])).join(','));
  });
  return `${lines.join('\r\n')}\r\n`;
}

/** The same object `nomos audit --json` prints, with the period it covers. */
export function toJson(report: AuditReport, since: string, start: Date | null): string {
  return `${JSON.stringify({ since, period_start: start?.toISOString() ?? null, ...report }, null, 2)}\n`;
}

/** nomos-audit-7d-20260718-0945.csv: the period and when it was taken, safe on every file system. */
export function fileName(since: string, extension: 'csv' | 'json', now: Date = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const stamp = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-${pad(now.getHours())}${pad(now.getMinutes())}`;
  const period = since.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '');
  return `nomos-audit-${period}-${stamp}.${extension}`;
}

export function saveFile(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked a moment later: some browsers start reading the Blob only after the click has returned.
  setTimeout(() => URL.revokeObjectURL(url), 5_000);
}
