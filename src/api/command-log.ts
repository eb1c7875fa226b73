// The fleet-wide command log (GET /executions): its query (filters, page, export format), its row as the API
// answers it (with links to the session and the approval), and its exports, CSV (RFC 4180) and JSON, streamed a
// page at a time up to EXPORT_CAP rows. The route itself is in executions.ts.
import { Readable } from 'node:stream';
import { z } from 'zod';
import { Actor } from '../domain/messages.ts';
import { RiskClass } from '../domain/session/events.ts';
import type { Queryable } from '../ports/db.ts';
import { ApprovalStatus, type CommandLogEntry, type CommandLogFilter, ExecutionStatus, listCommandLog } from '../projections/executions.ts';
import { IncludeDeleted } from './deleted.ts';
import { MinPosition } from './freshness.ts';
import { parseSince } from './since.ts';
import { AsOf, Time, Uuid } from './views.ts';

export const LOG_PAGE_DEFAULT = 100;
export const LOG_PAGE_MAX = 1_000;
/** The most rows one export holds: past it the answer says it was cut (x-nomos-export-truncated, `truncated`). */
export const EXPORT_CAP = 100_000;
/** Rows read per statement while an export streams. */
const EXPORT_BATCH = 1_000;

/**
 * One value of a query parameter: a repeated key (?status=a&status=b) is refused by name rather than read as
 * either; an empty value (`target=` left by a form) means "not given".
 */
const single = <T extends z.ZodType>(name: string, schema: T) =>
  z
    .preprocess((v) => (v === '' ? undefined : v), z.unknown())
    .superRefine((v, ctx) => {
      if (Array.isArray(v)) ctx.addIssue({ code: 'custom', message: `${name} is given more than once; give it once` });
    })
    .pipe(schema.optional());

const Text = (max: number) => z.string().max(max).regex(/^[^\0]*$/, 'must not contain a NUL character');

/** role:id of whoever acted, as the log records actors (operator:alice, agent:nomos, system:sweeper). */
const ActorName = (name: string) =>
  Text(210)
    .regex(/^(operator|agent|system):[^\s:]{1,200}$/, `${name} must be role:id with role operator, agent or system, such as operator:alice`)
    .transform((value): Actor => {
      const at = value.indexOf(':');
      return { role: value.slice(0, at) as Actor['role'], id: value.slice(at + 1) };
    });

/** A time's calendar day exists (JavaScript reads 30 February as 2 March); a duration has none to check. */
function realDay(value: string): boolean {
  const day = /^\s*(\d{4})-(\d{2})-(\d{2})/.exec(value);
  if (day === null) return true;
  const [y, m, d] = day.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

const TimeParam = (name: string) =>
  z.string().transform((value, ctx) => {
    const date = realDay(value) ? parseSince(value, new Date()) : null;
    if (date === null) {
      ctx.addIssue({ code: 'custom', message: `${name} takes an RFC 3339 time (2026-07-18T09:45:00Z) or a duration back from now (90m, 24h, 7d)` });
      return z.NEVER;
    }
    return date;
  });

export const CommandLogQuery = z.strictObject({
  target: single('target', Text(200).describe('exactly this target slug')),
  host: single('host', Text(200).describe('the host and every container and VM whose parent it is in the inventory')),
  actor: single('actor', ActorName('actor').describe('who requested the execution, role:id')),
  approver: single('approver', ActorName('approver').describe('who granted or denied its approval, role:id')),
  risk: single('risk', z.enum(RiskClass.options, { error: `risk must be one of ${RiskClass.options.join(', ')}` })),
  status: single('status', z.enum(ExecutionStatus.options, { error: `status must be one of ${ExecutionStatus.options.join(', ')}` })),
  rule: single('rule', Text(200).describe("the deciding rule of the operator's policy: a rule id, classifier or floor")),
  session: single('session', z.uuid({ error: 'session must be a session id (a UUID)' })),
  since: single('since', TimeParam('since').describe('requested at or after: an RFC 3339 time or a duration back from now')),
  until: single('until', TimeParam('until').describe('requested before: an RFC 3339 time or a duration back from now')),
  limit: single('limit', z.coerce.number({ error: 'limit must be a number' }).int().min(1).max(LOG_PAGE_MAX)).describe(`rows per page (default ${LOG_PAGE_DEFAULT}, at most ${LOG_PAGE_MAX})`),
  cursor: single('cursor', Text(400).describe('the next_cursor of the previous page')),
  format: single('format', z.enum(['csv', 'json'], { error: 'format must be csv or json' }).describe('an attachment of every matching row (limit and cursor do not apply)')),
  include_deleted: single('include_deleted', IncludeDeleted),
  min_position: single('min_position', MinPosition),
});
export type CommandLogQuery = z.infer<typeof CommandLogQuery>;

export function filterOf(q: CommandLogQuery, includeDeleted: boolean): CommandLogFilter {
  return {
    ...(q.target !== undefined && { target: q.target }),
    ...(q.host !== undefined && { host: q.host }),
    ...(q.actor !== undefined && { actor: q.actor }),
    ...(q.approver !== undefined && { approver: q.approver }),
    ...(q.risk !== undefined && { risk: q.risk }),
    ...(q.status !== undefined && { status: q.status }),
    ...(q.rule !== undefined && { rule: q.rule }),
    ...(q.session !== undefined && { session: q.session }),
    ...(q.since !== undefined && { since: q.since }),
    ...(q.until !== undefined && { until: q.until }),
    includeDeleted,
  };
}

/** The next page's address: the same filters (times as the instants they stood for), the limit and the cursor. */
export function nextPagePath(q: CommandLogQuery, limit: number, cursor: string): string {
  const next = new URLSearchParams();
  for (const key of ['target', 'host', 'risk', 'status', 'rule', 'session', 'include_deleted'] as const) if (q[key] !== undefined) next.set(key, q[key]);
  for (const key of ['actor', 'approver'] as const) if (q[key] !== undefined) next.set(key, `${q[key].role}:${q[key].id}`);
  for (const key of ['since', 'until'] as const) if (q[key] !== undefined) next.set(key, q[key].toISOString());
  next.set('limit', String(limit));
  next.set('cursor', cursor);
  return `/executions?${next.toString()}`;
}

export const CommandLogRow = z.object({
  id: Uuid,
  session_id: Uuid,
  target: z.string(),
  command: z.string(),
  risk_class: z.string(),
  decision: z.enum(['allow', 'ask', 'deny']).nullable().describe("the operator's policy's decision (null: requested before the policy was consulted)"),
  rule_id: z.string().nullable().describe('the rule that decided: a rule id, classifier or floor'),
  policy_version: z.number().int().nullable(),
  status: ExecutionStatus,
  exit_code: z.number().int().nullable(),
  requested_at: Time,
  started_at: Time.nullable(),
  finished_at: Time.nullable(),
  duration_ms: z.number().int().nullable(),
  requested_by: Actor.describe('who requested it'),
  approval_id: Uuid.nullable(),
  approval_status: ApprovalStatus.nullable(),
  approver: Actor.nullable().describe('who granted or denied its approval'),
  approval_decided_at: Time.nullable(),
  session_deleted: z.boolean(),
  links: z.object({
    session: z.string().describe('the session in the API'),
    execution: z.string().describe('the execution in the API, with its output'),
    session_page: z.string().describe("the execution on its session's page in the console"),
    approval_page: z.string().nullable().describe("the approval on its session's page in the console"),
  }),
});
export type CommandLogRow = z.infer<typeof CommandLogRow>;

export const CommandLogPage = z.object({ executions: z.array(CommandLogRow), next_cursor: z.string().nullable().describe('the next page (null on the last)'), ...AsOf });

/** format=json: the file, every matching row up to the cap. */
export const CommandLogExport = z.object({
  ...AsOf,
  exported_at: Time,
  cap: z.number().int().describe('the most rows an export holds'),
  executions: z.array(CommandLogRow),
  truncated: z.boolean().describe('more rows matched than the cap: narrow the filters'),
});

/**
 * Whether an Accept header asks for CSV over JSON: text/csv listed with a weight above zero, and above any
 * application/json the header lists and not below the wildcard. Without the header (or with JSON preferred), JSON.
 */
export function wantsCsv(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const weights = new Map<string, number>();
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (type !== '' && !Number.isNaN(weight)) weights.set(type, Math.max(weights.get(type) ?? 0, weight));
  }
  const csv = weights.get('text/csv') ?? 0;
  return csv > 0 && csv > (weights.get('application/json') ?? 0) && csv >= (weights.get('*/*') ?? 0);
}

export function withLinks(entry: CommandLogEntry): CommandLogRow {
  const session = encodeURIComponent(entry.session_id);
  return {
    ...entry,
    links: {
      session: `/sessions/${session}`,
      execution: `/executions/${encodeURIComponent(entry.id)}`,
      session_page: `/#/sessions/${session}?focus=exec-${encodeURIComponent(entry.id)}`,
      approval_page: entry.approval_id === null ? null : `/#/sessions/${session}?focus=approval-${encodeURIComponent(entry.approval_id)}`,
    },
  };
}

// ---- exports ----

const CSV_COLUMNS = [
  'id', 'requested_at', 'session_id', 'target', 'command', 'risk_class', 'decision', 'rule_id', 'policy_version', 'status', 'exit_code',
  'started_at', 'finished_at', 'duration_ms', 'requested_by', 'approval_id', 'approval_status', 'approver', 'approval_decided_at', 'session_deleted',
] as const;

/**
 * One CSV field (RFC 4180: quoted when it holds a comma, quote or line break, quotes doubled). A text that a
 * spreadsheet would take for a formula (=, +, -, @, tab or CR first) gets a leading apostrophe: commands are
 * written by agents, and an auditor opening the file must not run what one wrote.
 */
export function csvField(value: string | number | boolean | null): string {
  const raw = value === null ? '' : String(value);
  const text = typeof value === 'string' && /^[=+\-@\t\r]/.test(value) ? `'${raw}` : raw;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const actorText = (actor: Actor | null): string | null => (actor === null ? null : `${actor.role}:${actor.id}`);

function csvLine(row: CommandLogRow): string {
  const cells = { ...row, requested_by: actorText(row.requested_by), approver: actorText(row.approver) };
  return `${CSV_COLUMNS.map((c) => csvField(cells[c])).join(',')}\r\n`;
}

/** The rows an export holds, newest first, a statement of EXPORT_BATCH at a time, at most `cap`. */
async function* exportRows(db: Queryable, filter: CommandLogFilter, cap: number): AsyncGenerator<CommandLogRow> {
  let sent = 0;
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<typeof listCommandLog>> = await listCommandLog(db, filter, { limit: Math.min(EXPORT_BATCH, cap - sent), ...(cursor !== null && { cursor }) });
    for (const entry of page.executions) yield withLinks(entry);
    sent += page.executions.length;
    cursor = page.next_cursor;
  } while (cursor !== null && sent < cap);
}

export interface ExportAnswer {
  readonly type: string;
  readonly fileName: string;
  readonly body: Readable;
}

/** nomos-commands-20260718T094500Z.csv: when it was taken, safe on every file system. */
function exportName(format: 'csv' | 'json', now: Date): string {
  return `nomos-commands-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '')}.${format}`;
}

/**
 * The export as a stream: CSV with a header row, CRLF line ends; JSON as {as_of_position, exported_at,
 * executions: […], truncated}, the rows written as they are read.
 */
export function exportStream(db: Queryable, filter: CommandLogFilter, format: 'csv' | 'json', asOf: number, truncated: boolean, cap = EXPORT_CAP): ExportAnswer {
  const now = new Date();
  const rows = exportRows(db, filter, cap);
  async function* csv() {
    yield `${CSV_COLUMNS.join(',')}\r\n`;
    for await (const row of rows) yield csvLine(row);
  }
  async function* json() {
    yield `{"as_of_position":${asOf},"exported_at":${JSON.stringify(now.toISOString())},"cap":${cap},"executions":[`;
    let first = true;
    for await (const row of rows) {
      yield `${first ? '\n' : ',\n'}${JSON.stringify(row)}`;
      first = false;
    }
    yield `\n],"truncated":${truncated}}\n`;
  }
  return {
    type: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    fileName: exportName(format, now),
    body: Readable.from(format === 'csv' ? csv() : json()),
  };
}
