// `nomos audit` as an auditor runs it: the real CLI in a child process against a real server, with sessions
// driven through the API; the pager against a fake server that counts requests; the report's arithmetic alone.
import { type Server, createServer } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AuditSession, buildReport, formatEntry, median, toEntry } from '../../src/cli/audit-report.ts';
import { fetchSessions } from '../../src/cli/audit.ts';
import { execNomos, freePort } from '../support/cli-process.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';



/** The report block of one session: from its `Session:` line up to the next blank line. */
function block(stdout: string, id: string): string {
  const start = stdout.indexOf(`Session: ${id.slice(0, 8)} `);
  expect(start, `no entry for ${id} in:\n${stdout}`).toBeGreaterThanOrEqual(0);
  const end = stdout.indexOf('\n\n', start);
  return stdout.slice(start, end === -1 ? undefined : end);
}

describe.each(databases)('nomos audit on $name', (database) => {
  let server: TestServer;
  let env: Record<string, string>;
  const ids: Record<'fixed' | 'noTool' | 'noToolAgain' | 'broken' | 'open', string> = { fixed: '', noTool: '', noToolAgain: '', broken: '', open: '' };

  beforeAll(async () => {
    server = await startTestServer(database);
    env = { NOMOS_URL: server.url };
    let position = 0;
    const command = async (id: string, body: Record<string, unknown>) => {
      const res = await server.request('POST', `/sessions/${id}/commands`, body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      position = Math.max(position, res.body.position);
    };
    const session = async (goal: string | null, tools: string[], text: string | null, outcome: string | null, summary = 'done') => {
      const created = await server.request('POST', '/sessions');
      expect(created.status).toBe(201);
      const id: string = created.body.session_id;
      await command(id, { type: 'post_user_message', text: 'please look at this' });
      if (goal !== null) await command(id, { type: 'set_goal', goal });
      for (const [i, name] of tools.entries()) {
        await command(id, { type: 'record_tool_call_requested', tool_call_id: `t${i}`, name, args: { target: 'lxc:rclone', command: 'true' } });
      }
      if (text !== null) await command(id, { type: 'record_assistant_message', text });
      if (outcome !== null) await command(id, { type: 'complete_task', outcome, summary });
      return id;
    };
    ids.fixed = await session('Fix the rclone backup so it completes instead of OOM-killing', ['run', 'run', 'get_entity'], 'Memory raised; the backup ran.', 'success');
    ids.noTool = await session('Change the owner of /mnt/media', ['run', 'classify_command'], 'There is no tool to change the owner on the NFS export.', 'partial', 'chown not done');
    ids.noToolAgain = await session('Upgrade packages on host:netbird-vps', ['run'], 'There is no tool to reach the VPS package manager.', 'partial', 'upgrade not done');
    ids.broken = await session('Restart the media server', ['run', 'run'], 'The restart failed with exit code 2.', 'failed', 'restart failed');
    ids.open = await session(null, ['whoami'], null, null);
    const read = await server.request('GET', `/sessions?min_position=${position}&limit=1`);
    expect(read.status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('prints every session with its counts, outcome, blocker and severity, then the summary', async () => {
    const run = await execNomos(['audit', '--since', '1h'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(block(run.stdout, ids.fixed)).toBe(
      [
        `Session: ${ids.fixed.slice(0, 8)} — "Fix the rclone backup so it completes instead of OOM-killing"`,
        '  Messages: 2 (1/1) · Tool calls: 3 across 1 turns · Top tools: run:2, get_entity:1',
        '  Objective: Fix the rclone backup so it completes instead of OOM-killing',
        '  Outcome ✅ (success) · Blocker: none · Severity: cosmetic',
      ].join('\n'),
    );
    expect(block(run.stdout, ids.noTool)).toMatch(/Tool calls: 2 across 1 turns · Top tools: classify_command:1, run:1\n.*\n {2}Outcome ⚠️ \(partial\) · Blocker: missing_capability · Severity: friction$/);
    expect(block(run.stdout, ids.broken)).toMatch(/Tool calls: 2 across 1 turns · Top tools: run:2\n.*\n {2}Outcome ❌ \(failed\) · Blocker: tool_error · Severity: blocker$/);
    expect(block(run.stdout, ids.open)).toBe(
      [
        `Session: ${ids.open.slice(0, 8)} — ""`,
        // The tool call opens the turn's assistant message, so the server counts one.
        '  Messages: 2 (1/1) · Tool calls: 1 across 1 turns · Top tools: whoami:1',
        '  Objective: (no goal set)',
        '  Outcome ⏳ (active) · Blocker: none · Severity: none',
      ].join('\n'),
    );
    expect(run.stdout).toContain('Summary: 5 sessions');
    expect(run.stdout).toContain('Outcomes: ✅ success 1 · ⚠️ partial 2 · ❌ failed 1 · ⏳ active 1');
    expect(run.stdout).toContain('Blockers: missing_capability:2, tool_error:1');
    expect(run.stdout).toContain('Top tools: run:6, classify_command:1, get_entity:1, whoami:1');
    expect(run.stdout).toContain('Median tool calls per session: 2');
  });

  it('filters by outcome and by blocker on the server', async () => {
    const partial = await execNomos(['audit', '--since', '1h', '--outcome', 'partial'], env);
    expect(partial.code, partial.stderr).toBe(0);
    expect(partial.stdout.match(/^Session: /gm)).toHaveLength(2);
    block(partial.stdout, ids.noTool);
    block(partial.stdout, ids.noToolAgain);
    expect(partial.stdout).toContain('Outcomes: ✅ success 0 · ⚠️ partial 2 · ❌ failed 0 · ⏳ active 0');
    const errors = await execNomos(['audit', '--since', '1h', '--blocker', 'tool_error'], env);
    expect(errors.code, errors.stderr).toBe(0);
    expect(errors.stdout.match(/^Session: /gm)).toHaveLength(1);
    block(errors.stdout, ids.broken);
  });

  it('prints the same report as JSON with --json', async () => {
    const run = await execNomos(['audit', '--since', '1h', '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    const page = await server.request('GET', '/sessions?limit=200&since=1h');
    expect(report.sessions.map((s: { id: string }) => s.id)).toEqual(page.body.sessions.map((s: { id: string }) => s.id));
    expect(report.as_of_position).toBeLessThanOrEqual(page.body.as_of_position);
    expect(report.sessions.find((s: { id: string }) => s.id === ids.noTool)).toEqual({
      id: ids.noTool,
      title: 'Change the owner of /mnt/media',
      objective: 'Change the owner of /mnt/media',
      outcome: 'partial',
      blocker: 'missing_capability',
      dispute: null,
      severity: 'friction',
      message_count: 2,
      user_message_count: 1,
      assistant_message_count: 1,
      tool_call_count: 2,
      turn_count: 1,
      top_tools: [
        { name: 'classify_command', count: 1 },
        { name: 'run', count: 1 },
      ],
      input_tokens: null,
      output_tokens: null,
    });
    expect(report.summary).toEqual({
      sessions: 5,
      outcomes: { success: 1, partial: 2, failed: 1, active: 1 },
      blockers: [
        { blocker: 'missing_capability', count: 2 },
        { blocker: 'tool_error', count: 1 },
      ],
      disputed: 0,
      top_tools: [
        { name: 'run', count: 6 },
        { name: 'classify_command', count: 1 },
        { name: 'get_entity', count: 1 },
        { name: 'whoami', count: 1 },
      ],
      median_tool_calls: 2,
      input_tokens: null,
      output_tokens: null,
    });
  });

  it("exits non-zero with the server's problem for a bad --since", async () => {
    const run = await execNomos(['audit', '--since', 'yesterday'], env);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/400 validation_failed.*since takes an RFC 3339 time/);
    expect(run.stdout).toBe('');
  });

  it('exits non-zero naming the URL when no server answers', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await execNomos(['audit'], { NOMOS_URL: url });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`cannot reach the Nomos server at ${url}`);
  });
});

describe('the audit pager', () => {
  let fake: Server;
  let url: string;
  const requests: URL[] = [];
  const row = (n: number): AuditSession => ({
    id: `0000000${n}-0000-4000-8000-000000000000`,
    title: `session ${n}`,
    goal: null,
    status: 'done',
    outcome: 'success',
    blocker: null,
    message_count: 2,
    user_message_count: 1,
    assistant_message_count: 1,
    tool_call_count: n,
    turn_count: 1,
    top_tools: [{ name: 'run', count: n }],
    input_tokens: null,
    output_tokens: null,
  });
  // Three pages keyed by cursor; each page reports its own as_of_position.
  const pages: Record<string, { sessions: AuditSession[]; next_cursor: string | null; as_of_position: number }> = {
    '': { sessions: [row(1), row(2)], next_cursor: 'c2', as_of_position: 40 },
    c2: { sessions: [row(3), row(4)], next_cursor: 'c3', as_of_position: 38 },
    c3: { sessions: [row(5)], next_cursor: null, as_of_position: 41 },
  };

  // How the fake names the next page: not at all (an older server: the client follows next_cursor), in a Link
  // header with each page's body held back until the next page is asked for (or 2 s pass), or in a Link header
  // naming a cursor other than next_cursor.
  let links: 'none' | 'ahead' | 'wrong' = 'none';
  const events: string[] = [];
  let nextAsked: (() => void) | null = null;

  beforeAll(async () => {
    fake = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://fake');
      requests.push(u);
      const cursor = u.searchParams.get('cursor') ?? '';
      events.push(`asked ${cursor || 'first'}`);
      nextAsked?.();
      const page = pages[cursor];
      if (!page) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'invalid_cursor', detail: 'bad cursor' }));
        return;
      }
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (links !== 'none' && page.next_cursor !== null) {
        const next = new URLSearchParams(u.searchParams);
        next.set('cursor', links === 'wrong' ? 'c3' : page.next_cursor);
        headers.link = `</sessions?${next.toString()}>; rel="next"`;
      }
      res.writeHead(200, headers);
      res.flushHeaders();
      const finish = () => {
        nextAsked = null;
        events.push(`sent ${cursor || 'first'}`);
        res.end(JSON.stringify(page));
      };
      if (links !== 'ahead' || page.next_cursor === null) return finish();
      const timer = setTimeout(finish, 2_000);
      nextAsked = () => {
        clearTimeout(timer);
        finish();
      };
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    const address = fake.address();
    if (typeof address !== 'object' || address === null) throw new Error('no address');
    url = `http://127.0.0.1:${address.port}`;
  });
  beforeEach(() => {
    requests.length = 0;
    events.length = 0;
    links = 'none';
  });
  afterAll(async () => {
    await new Promise((resolve) => fake.close(resolve));
  });

  it('makes exactly one request per page, passing the filters and the cursor each time', async () => {
    const { sessions, asOfPosition } = await fetchSessions({ since: '7d', outcome: 'partial', blocker: 'tool_error' }, { NOMOS_URL: url });
    expect(sessions.map((s) => s.tool_call_count)).toEqual([1, 2, 3, 4, 5]);
    expect(asOfPosition).toBe(38);
    expect(requests).toHaveLength(3);
    expect(requests.map((r) => r.searchParams.get('cursor'))).toEqual([null, 'c2', 'c3']);
    for (const r of requests) {
      expect(r.pathname).toBe('/sessions');
      expect(Object.fromEntries(r.searchParams)).toMatchObject({ limit: '1000', since: '7d', outcome: 'partial', blocker: 'tool_error' });
      // Only what the report reads.
      expect(r.searchParams.get('fields')?.split(',')).toEqual(['id', 'title', 'goal', 'status', 'outcome', 'blocker', 'message_count', 'user_message_count', 'assistant_message_count', 'tool_call_count', 'turn_count', 'top_tools', 'input_tokens', 'output_tokens', 'outcome_disputed', 'dispute']);
    }
  });

  it("asks for the page a Link header names as soon as the headers arrive, before the page's body is in", async () => {
    links = 'ahead';
    const { sessions, asOfPosition } = await fetchSessions({ since: '7d', outcome: 'partial' }, { NOMOS_URL: url });
    expect(sessions.map((s) => s.tool_call_count)).toEqual([1, 2, 3, 4, 5]);
    expect(asOfPosition).toBe(38);
    // Each page's body was held back until the next was asked for: a client waiting for bodies would see 2 s pauses.
    expect(events).toEqual(['asked first', 'asked c2', 'sent first', 'asked c3', 'sent c2', 'sent c3']);
    expect(requests.map((r) => r.searchParams.get('outcome'))).toEqual(['partial', 'partial', 'partial']);
  });

  it('stops with an error when a Link header names another page than next_cursor', async () => {
    links = 'wrong';
    await expect(fetchSessions({ since: '7d' }, { NOMOS_URL: url })).rejects.toThrow(/named a next page \(cursor c3\) other than its next_cursor \(c2\)/);
  });
});

describe('the audit report', () => {
  const base: AuditSession = {
    id: 'a51e2086-a816-4206-a556-dbca362cdda6',
    title: null,
    goal: null,
    status: 'done',
    outcome: 'partial',
    blocker: 'approval_timeout',
    message_count: 12,
    user_message_count: 5,
    assistant_message_count: 7,
    tool_call_count: 20,
    turn_count: 6,
    top_tools: [],
    input_tokens: null,
    output_tokens: null,
  };

  it('takes the median of tool calls, halfway between the middle two for an even count', () => {
    expect(median([])).toBeNull();
    expect(median([7, 1, 3])).toBe(3);
    expect(median([4, 1, 10, 2])).toBe(3);
  });

  it('cuts the title to 60 characters and falls back from goal to title to "(no goal set)"', () => {
    const title = 'x'.repeat(80);
    const entry = formatEntry(toEntry({ ...base, title }));
    expect(entry).toContain(`Session: a51e2086 — "${'x'.repeat(60)}"\n`);
    expect(entry).toContain(`Objective: ${title}`);
    expect(entry).toContain('Top tools: none');
    expect(toEntry(base).objective).toBe('(no goal set)');
    expect(toEntry({ ...base, goal: 'the goal', title }).objective).toBe('the goal');
  });

  it('counts a reopened session as active, and keeps only the ten busiest tools across sessions', () => {
    expect(toEntry({ ...base, status: 'active' })).toMatchObject({ outcome: 'active', severity: 'none' });
    const many = Array.from({ length: 12 }, (_, i) => ({ ...base, top_tools: [{ name: `tool${String(i).padStart(2, '0')}`, count: i + 1 }] }));
    const { summary } = buildReport(many, 1);
    expect(summary.top_tools).toHaveLength(10);
    expect(summary.top_tools[0]).toEqual({ name: 'tool11', count: 12 });
    expect(summary.top_tools.at(-1)).toEqual({ name: 'tool02', count: 3 });
  });
});
