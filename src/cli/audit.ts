// `nomos audit`: the session-review report over a running server's GET /sessions read model. It pages through
// the list (one request per page, filters passed to the server) and never opens a transcript: the list rows
// carry every aggregate the report needs.
import { Command } from 'commander';
import { z } from 'zod';
import { type AuditReport, AuditSession, buildReport, formatReport } from './audit-report.ts';
import { DEFAULT_URL } from './fleet.ts';

const PAGE_SIZE = 200;

const Page = z.object({ sessions: z.array(AuditSession), next_cursor: z.string().nullable(), as_of_position: z.number() });
const Problem = z.object({ code: z.string().optional(), detail: z.string().optional() });

export interface AuditFilter {
  since: string;
  outcome?: string;
  blocker?: string;
}

interface AuditOptions {
  since: string;
  outcome?: string;
  blocker?: string;
  json?: boolean;
}

export function auditCommand(): Command {
  return new Command('audit')
    .description(`session-review report from the server at NOMOS_URL (default ${DEFAULT_URL}, with NOMOS_TOKEN): each session, then a summary`)
    .option('--since <when>', 'sessions active since: a duration (90m, 24h, 7d) or an RFC 3339 time', '7d')
    .option('--outcome <outcome>', 'only sessions that ended success, partial or failed')
    .option('--blocker <blocker>', 'only sessions with this blocker')
    .option('--json', 'print the report as JSON: {sessions, summary, as_of_position}')
    .action(async (options: AuditOptions) => {
      const filter: AuditFilter = {
        since: options.since,
        ...(options.outcome !== undefined && { outcome: options.outcome }),
        ...(options.blocker !== undefined && { blocker: options.blocker }),
      };
      const report = await auditReport(filter, process.env);
      console.log(options.json ? JSON.stringify(report, null, 2) : formatReport(report));
    });
}

export async function auditReport(filter: AuditFilter, env: NodeJS.ProcessEnv): Promise<AuditReport> {
  const { sessions, asOfPosition } = await fetchSessions(filter, env);
  return buildReport(sessions, asOfPosition);
}

/**
 * Every session matching `filter`, newest first, following next_cursor one request per page. The report's
 * position is the lowest page's: every page reflected at least that much of the history.
 */
export async function fetchSessions(filter: AuditFilter, env: NodeJS.ProcessEnv): Promise<{ sessions: AuditSession[]; asOfPosition: number }> {
  const base = (env.NOMOS_URL || DEFAULT_URL).replace(/\/+$/, '');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (env.NOMOS_TOKEN) headers.authorization = `Bearer ${env.NOMOS_TOKEN}`;
  const sessions: AuditSession[] = [];
  const seen = new Set<string>();
  let asOfPosition = Number.POSITIVE_INFINITY;
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE), since: filter.since });
    if (filter.outcome !== undefined) query.set('outcome', filter.outcome);
    if (filter.blocker !== undefined) query.set('blocker', filter.blocker);
    if (cursor !== null) query.set('cursor', cursor);
    const page = await getPage(base, `/sessions?${query.toString()}`, headers);
    sessions.push(...page.sessions);
    asOfPosition = Math.min(asOfPosition, page.as_of_position);
    cursor = page.next_cursor;
    // A server that hands back a cursor twice would page forever; better to stop and say so.
    if (cursor !== null) {
      if (seen.has(cursor)) throw new Error(`${base} repeated the cursor ${cursor} in GET /sessions; stopped after ${sessions.length} sessions`);
      seen.add(cursor);
    }
  } while (cursor !== null);
  return { sessions, asOfPosition };
}

async function getPage(base: string, path: string, headers: Record<string, string>): Promise<z.infer<typeof Page>> {
  let response: Response;
  try {
    response = await fetch(base + path, { headers, signal: AbortSignal.timeout(60_000) });
  } catch (error) {
    const cause = error instanceof Error ? ((error.cause instanceof Error ? error.cause.message : undefined) ?? error.message) : String(error);
    throw new Error(`cannot reach the Nomos server at ${base} (set NOMOS_URL to its address): ${cause}`);
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: reported as text below
  }
  if (!response.ok) {
    const problem = Problem.safeParse(body);
    const detail = problem.success ? (problem.data.detail ?? text) : text;
    const code = problem.success && problem.data.code ? ` ${problem.data.code}` : '';
    throw new Error(`${base} refused GET /sessions (${response.status}${code}): ${detail.slice(0, 4000)}`);
  }
  const page = Page.safeParse(body);
  if (!page.success) throw new Error(`${base} answered GET /sessions with something that is not a sessions page: ${text.slice(0, 200)}`);
  return page.data;
}
