// `nomos audit`: the session-review report over a running server's GET /sessions read model. It pages through
// the list (one request per page, filters passed to the server) and never opens a transcript: the list rows
// carry every aggregate the report needs.
import { z } from 'zod';
import { type AuditReport, type AuditSession, buildReport, formatReport } from './audit-report.ts';
import { type OpenedAnswer, type ServerClient, serverClient } from './server-client.ts';

/** The fields of a GET /sessions row the report reads, checked as they come off the wire. */
const AuditRow = z.object({
  id: z.string(),
  title: z.string().nullable(),
  goal: z.string().nullable(),
  status: z.enum(['active', 'done', 'failed']),
  outcome: z.enum(['success', 'partial', 'failed']).nullable(),
  blocker: z.string().nullable(),
  message_count: z.number().int(),
  user_message_count: z.number().int(),
  assistant_message_count: z.number().int(),
  tool_call_count: z.number().int(),
  turn_count: z.number().int(),
  top_tools: z.array(z.object({ name: z.string(), count: z.number().int() })),
  input_tokens: z.number().int().nonnegative().nullable(),
  output_tokens: z.number().int().nonnegative().nullable(),
  outcome_disputed: z.boolean().optional(),
  dispute: z.object({ detail: z.string() }).nullable().optional(),
}) satisfies z.ZodType<AuditSession>;

// The server's largest page, and only the fields the report reads: the review of a fleet is a few requests.
const PAGE_SIZE = 1_000;
const FIELDS = Object.keys(AuditRow.shape).join(',');

const Page = z.object({ sessions: z.array(AuditRow), next_cursor: z.string().nullable(), as_of_position: z.number() });

export interface AuditFilter {
  since: string;
  outcome?: string;
  blocker?: string;
  /** Deleted sessions too (the server allows it operators and auditors). */
  includeDeleted?: boolean;
}

export interface AuditOptions {
  since: string;
  outcome?: string;
  blocker?: string;
  includeDeleted?: boolean;
  json?: boolean;
}

/** `nomos audit`'s action: the report of the sessions the options select, printed. */
export async function auditAction(options: AuditOptions): Promise<void> {
  const filter: AuditFilter = {
    since: options.since,
    ...(options.outcome !== undefined && { outcome: options.outcome }),
    ...(options.blocker !== undefined && { blocker: options.blocker }),
    ...(options.includeDeleted === true && { includeDeleted: true }),
  };
  const report = await auditReport(filter, process.env);
  console.log(options.json ? JSON.stringify(report, null, 2) : formatReport(report));
}

export async function auditReport(filter: AuditFilter, env: NodeJS.ProcessEnv): Promise<AuditReport> {
  const { sessions, asOfPosition } = await fetchSessions(filter, env);
  return buildReport(sessions, asOfPosition);
}

/**
 * Every session matching `filter`, newest first, one request per page. The server names the next page in a
 * `Link: <…>; rel="next"` header: it is asked for as soon as a page's headers arrive, so reading and checking
 * that page's body overlaps the server's work on the next (a server without the header is followed by
 * next_cursor, one page after the other). The report's position is the lowest page's: every page reflected at
 * least that much of the history.
 */
export async function fetchSessions(filter: AuditFilter, env: NodeJS.ProcessEnv): Promise<{ sessions: AuditSession[]; asOfPosition: number }> {
  const client = serverClient(env);
  const sessions: AuditSession[] = [];
  const seen = new Set<string>();
  let asOfPosition = Number.POSITIVE_INFINITY;
  const pathWith = (cursor: string | null) => {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE), since: filter.since, fields: FIELDS });
    if (filter.outcome !== undefined) query.set('outcome', filter.outcome);
    if (filter.blocker !== undefined) query.set('blocker', filter.blocker);
    if (filter.includeDeleted === true) query.set('include_deleted', 'true');
    if (cursor !== null) query.set('cursor', cursor);
    return `/sessions?${query.toString()}`;
  };
  let pending: Promise<OpenedPage> | null = openPage(client, pathWith(null));
  while (pending !== null) {
    const opened: OpenedPage = await pending;
    const ahead = linkedNext(client.base, opened);
    pending = ahead === null ? null : openPage(client, ahead.path);
    const page = await opened.body();
    sessions.push(...page.sessions);
    asOfPosition = Math.min(asOfPosition, page.as_of_position);
    const cursor = page.next_cursor;
    if (ahead !== null && ahead.cursor !== cursor) {
      throw new Error(`${client.base} named a next page (cursor ${ahead.cursor}) other than its next_cursor (${cursor}) in GET /sessions; stopped after ${sessions.length} sessions`);
    }
    if (cursor === null) break;
    // A server that hands back a cursor twice would page forever; better to stop and say so.
    if (seen.has(cursor)) throw new Error(`${client.base} repeated the cursor ${cursor} in GET /sessions; stopped after ${sessions.length} sessions`);
    seen.add(cursor);
    pending ??= openPage(client, pathWith(cursor));
  }
  return { sessions, asOfPosition };
}

type OpenedPage = OpenedAnswer<z.infer<typeof Page>>;

function openPage(client: ServerClient, path: string): Promise<OpenedPage> {
  const opened = client.open('GET', path, { schema: Page, what: 'GET /sessions' });
  // Asked for ahead of time: if the page before it fails, this one is never awaited and must not be reported.
  opened.catch(() => undefined);
  return opened;
}

/** The next page a page's Link header names, if it is on the same server and carries a cursor. */
function linkedNext(base: string, opened: OpenedPage): { path: string; cursor: string } | null {
  const link = /<([^>]*)>\s*;\s*rel="?next"?/.exec(opened.headers.get('link') ?? '');
  if (!link) return null;
  const url = new URL(link[1]!, opened.url);
  const cursor = url.searchParams.get('cursor');
  if (cursor === null || !url.href.startsWith(`${base}/`)) return null;
  return { path: url.href.slice(base.length), cursor };
}
