// The command log (GET /executions) over real HTTP on both databases: executions of two sessions by two agents
// on three targets, approved by one operator, denied by another, one allowed by a policy rule, one pending; each
// filter alone and together, keyset pages that neither repeat nor skip, CSV (RFC 4180, formula-safe) and JSON
// exports with the same filters, and bad input answered 400 naming the parameter with nothing appended.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { csvField, wantsCsv } from '../../src/api/command-log.ts';
import { parseCsv } from '../support/csv.ts';
import { databases } from '../support/databases.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

const ALICE = 'alice-token-0123456789abcdef-0123456';
const BOB = 'bob-token-0123456789abcdef-01234567';
const BOT = 'bot-token-0123456789abcdef-01234567';
const HELPER = 'helper-token-0123456789abcdef-01234';
const AUDIT = 'auditor-token-0123456789abcdef-0123';
const tokens = parseTokens(`operator:alice:${ALICE},operator:bob:${BOB},agent:bot:${BOT},agent:helper:${HELPER},auditor:carol:${AUDIT}`);
const as = (token: string, more: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...more });

const POLICY = {
  rules: [
    {
      id: 'rclone-restart',
      match: ['systemctl', ['restart', 'reload'], 'rclone-backup'],
      targets: ['lxc:*'],
      decision: 'allow',
      justification: 'restarting the backup unit is routine',
      examples: { match: ['systemctl restart rclone-backup'] },
    },
  ],
};

describe.each(databases)('the command log on $name', (database) => {
  let server: TestServer;
  let s1: string;
  let s2: string;
  let fresh: string;
  /** The executions by what they ran, as the test requested them. */
  const ids: Record<string, string> = {};
  const approvals: Record<string, string> = {};
  const get = async (query: string, token = AUDIT, headers: Record<string, string> = {}) => server.request('GET', `/executions?${query}${query ? '&' : ''}${fresh}`, undefined, as(token, headers));
  const listed = async (query: string) => {
    const res = await get(query);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.executions as Array<{ id: string }>).map((e) => e.id);
  };
  const byName = (...names: string[]) => names.map((n) => ids[n]);

  beforeAll(async () => {
    server = await startTestServer(database, { tokens, executor: instantExecutor() });
    const reg = await server.request('POST', '/entities', {
      entities: [
        { slug: 'host:pve1', type: 'host', ssh: { host: '192.0.2.10', port: 22, user: 'root' } },
        { slug: 'lxc:web', type: 'lxc', parent: 'host:pve1', pve_id: 101 },
        { slug: 'host:nas', type: 'host', ssh: { host: '192.0.2.20', port: 22, user: 'admin' } },
      ],
    }, as(ALICE));
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    expect((await server.request('PUT', '/policy', POLICY, as(ALICE))).status).toBe(200);
    s1 = (await server.request('POST', '/sessions', undefined, as(BOT))).body.session_id;
    s2 = (await server.request('POST', '/sessions', undefined, as(HELPER))).body.session_id;
    const run = async (name: string, session: string, token: string, target: string, command: string) => {
      const res = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target, command }, as(token));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids[name] = res.body.execution_id;
      if (res.body.approval_id) approvals[name] = res.body.approval_id;
      return res.body;
    };
    // Oldest first: the log answers newest first.
    expect((await run('uptime', s1, BOT, 'host:pve1', 'uptime')).status).toBe('succeeded');
    expect((await run('restart', s1, BOT, 'lxc:web', 'systemctl restart rclone-backup')).status).toBe('succeeded');
    expect((await run('touch', s1, BOT, 'lxc:web', 'touch /tmp/nomos-log-a')).status).toBe('approval_required');
    expect((await run('denied', s2, HELPER, 'host:nas', 'touch /tmp/nomos-log-b')).status).toBe('approval_required');
    expect((await run('pending', s2, HELPER, 'host:nas', 'rm -rf /tmp/nomos-log-c')).status).toBe('approval_required');
    expect((await run('quoted', s2, HELPER, 'host:nas', 'echo "a,b" -x')).status).toBe('succeeded');
    expect((await server.request('POST', `/approvals/${approvals.touch}/approve`, undefined, as(ALICE))).status).toBe(200);
    const denied = await server.request('POST', `/approvals/${approvals.denied}/deny`, { reason: 'not now' }, as(BOB));
    expect(denied.status).toBe(200);
    fresh = `min_position=${(await server.runtime.store.head()).position}`;
    await until('the approved execution ran', async () => ((await get(`status=succeeded`)).body.executions.length === 4 ? true : undefined));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('lists every execution across sessions, newest requested first, with its approval and links', async () => {
    expect(await listed('')).toEqual(byName('quoted', 'pending', 'denied', 'touch', 'restart', 'uptime'));
    const rows = (await get('')).body.executions as any[];
    const touch = rows.find((r) => r.id === ids.touch);
    expect(touch).toMatchObject({
      session_id: s1,
      target: 'lxc:web',
      command: 'touch /tmp/nomos-log-a',
      risk_class: 'config_mutation',
      status: 'succeeded',
      exit_code: 0,
      requested_by: { role: 'agent', id: 'bot' },
      approval_id: approvals.touch,
      approval_status: 'granted',
      approver: { role: 'operator', id: 'alice' },
      links: {
        session: `/sessions/${s1}`,
        execution: `/executions/${ids.touch}`,
        session_page: `/#/sessions/${s1}?focus=exec-${ids.touch}`,
        approval_page: `/#/sessions/${s1}?focus=approval-${approvals.touch}`,
      },
    });
    const pending = rows.find((r) => r.id === ids.pending);
    expect(pending).toMatchObject({ approval_status: 'pending', approver: null, status: 'awaiting_approval' });
    expect(rows.find((r) => r.id === ids.uptime)).toMatchObject({ approval_id: null, links: { approval_page: null } });
    // The execution link is a real one.
    expect((await server.request('GET', touch.links.execution, undefined, as(AUDIT))).body.status).toBe('succeeded');
  });

  it('narrows by each filter, and by several at once', async () => {
    expect(await listed('target=lxc:web')).toEqual(byName('touch', 'restart'));
    // A host and its guests.
    expect(await listed('host=host:pve1')).toEqual(byName('touch', 'restart', 'uptime'));
    expect(await listed('host=lxc:web')).toEqual(byName('touch', 'restart'));
    expect(await listed('actor=agent:helper')).toEqual(byName('quoted', 'pending', 'denied'));
    expect(await listed('actor=operator:alice')).toEqual([]);
    expect(await listed('approver=operator:alice')).toEqual(byName('touch'));
    expect(await listed('approver=operator:bob')).toEqual(byName('denied'));
    expect(await listed('risk=destructive')).toEqual(byName('pending'));
    expect(await listed('risk=reversible_low')).toEqual(byName('quoted', 'uptime'));
    expect(await listed('status=denied')).toEqual(byName('denied'));
    expect(await listed('status=awaiting_approval')).toEqual(byName('pending'));
    expect(await listed('rule=rclone-restart')).toEqual(byName('restart'));
    expect(await listed(`session=${s2}`)).toEqual(byName('quoted', 'pending', 'denied'));
    expect(await listed('session=00000000-0000-4000-8000-000000000000')).toEqual([]);
    expect(await listed('host=host:pve1&risk=config_mutation&approver=operator:alice')).toEqual(byName('touch'));
    expect(await listed(`actor=agent:bot&session=${s2}`)).toEqual([]);
    // An empty value (a form's blank field) is no filter.
    expect(await listed('target=&status=')).toHaveLength(6);
  });

  it('narrows by requested time: since is inclusive, until exclusive, durations count back from now', async () => {
    const rows = (await get('')).body.executions as Array<{ id: string; requested_at: string }>;
    const denied = rows.find((r) => r.id === ids.denied)!;
    expect(await listed(`since=${encodeURIComponent(denied.requested_at)}`)).toEqual(byName('quoted', 'pending', 'denied'));
    expect(await listed(`until=${encodeURIComponent(denied.requested_at)}`)).toEqual(byName('touch', 'restart', 'uptime'));
    expect(await listed('since=1h')).toHaveLength(6);
    expect(await listed('until=1h')).toEqual([]);
    expect(await listed('since=2020-01-01T00:00:00Z&until=2020-01-02T00:00:00Z')).toEqual([]);
  });

  it('pages with a keyset cursor that neither repeats nor skips, even as new executions arrive', async () => {
    const first = await get('limit=2');
    expect(first.body.executions.map((e: any) => e.id)).toEqual(byName('quoted', 'pending'));
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const link = first.headers.get('link');
    expect(link).toMatch(/^<\/executions\?.*cursor=.*>; rel="next"$/);
    // A command requested between pages sorts before the cursor: the next pages are unchanged.
    const late = await server.request('POST', `/sessions/${s1}/commands`, { type: 'run', target: 'host:nas', command: 'hostname' }, as(BOT));
    expect(late.status).toBe(200);
    fresh = `min_position=${(await server.runtime.store.head()).position}`;
    const second = await get(`limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.executions.map((e: any) => e.id)).toEqual(byName('denied', 'touch'));
    // Following the Link header carries the filters and the limit.
    const next = link!.slice(1, link!.indexOf('>'));
    const viaLink = await server.request('GET', next, undefined, as(AUDIT));
    expect(viaLink.body.executions.map((e: any) => e.id)).toEqual(byName('denied', 'touch'));
    const third = await get(`limit=2&cursor=${second.body.next_cursor}`);
    expect(third.body.executions.map((e: any) => e.id)).toEqual(byName('restart', 'uptime'));
    expect(third.body.next_cursor).toBeNull();
    expect(third.headers.get('link')).toBeNull();
    // Filters hold across pages.
    const filtered = await get('host=host:nas&limit=1');
    expect(filtered.headers.get('link')).toContain('host=host%3Anas');
    const page2 = await get(`host=host:nas&limit=1&cursor=${filtered.body.next_cursor}`);
    expect(page2.body.executions.map((e: any) => e.id)).toEqual(byName('quoted'));
  });

  it('exports every matching row as CSV: a header row, RFC 4180 quoting, the same filters', async () => {
    const res = await get('format=csv&session=' + s2);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="nomos-commands-\d{8}T\d{6}Z\.csv"$/);
    expect(res.headers.get('x-nomos-export-truncated')).toBe('false');
    const [header, ...records] = parseCsv(res.body as string);
    expect(header).toEqual([
      'id', 'requested_at', 'session_id', 'target', 'command', 'risk_class', 'decision', 'rule_id', 'policy_version', 'status', 'exit_code',
      'started_at', 'finished_at', 'duration_ms', 'requested_by', 'approval_id', 'approval_status', 'approver', 'approval_decided_at', 'session_deleted',
    ]);
    expect(records.map((r) => r[0])).toEqual(byName('quoted', 'pending', 'denied'));
    const col = (record: string[], name: string) => record[header!.indexOf(name)];
    expect(col(records[0]!, 'command')).toBe('echo "a,b" -x');
    expect((res.body as string)).toContain('"echo ""a,b"" -x"');
    expect(col(records[2]!, 'approver')).toBe('operator:bob');
    expect(col(records[2]!, 'status')).toBe('denied');
    expect(col(records[0]!, 'requested_by')).toBe('agent:helper');
    expect(col(records[1]!, 'exit_code')).toBe('');
    // Accept: text/csv asks for the same file; limit and cursor do not cut an export.
    const accepted = await get(`session=${s2}&limit=1`, AUDIT, { accept: 'text/csv' });
    expect(accepted.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(parseCsv(accepted.body as string)).toHaveLength(4);
    // A filter matching nothing: the header alone.
    expect(parseCsv((await get('format=csv&target=host:none')).body as string)).toHaveLength(1);
  });

  it('exports JSON with the rows, their links and whether the cap cut it', async () => {
    const res = await get('format=json&host=host:pve1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="nomos-commands-\d{8}T\d{6}Z\.json"$/);
    expect(res.body).toMatchObject({ truncated: false, as_of_position: expect.any(Number), exported_at: expect.any(String) });
    expect(res.body.executions.map((e: any) => e.id)).toEqual(byName('touch', 'restart', 'uptime'));
    expect(res.body.executions[0].links.approval_page).toBe(`/#/sessions/${s1}?focus=approval-${approvals.touch}`);
  });

  it('refuses bad filters with 400 naming the parameter, and appends nothing', async () => {
    const head = (await server.runtime.store.head()).position;
    const cases: Array<[string, RegExp, string?]> = [
      ['status=exploded', /status must be one of/],
      ['risk=spicy', /risk must be one of/],
      ['since=yesterday', /since takes an RFC 3339 time/],
      ['until=2026-02-30T00:00:00Z', /until takes an RFC 3339 time/],
      ['actor=alice', /actor must be role:id/],
      ['approver=operator:', /approver must be role:id/],
      ['session=not-a-uuid', /session must be a session id/],
      ['limit=0', /limit/],
      ['limit=abc', /limit must be a number/],
      ['status=denied&status=failed', /status is given more than once/],
      ['format=xlsx', /format must be csv or json/],
      ['color=red', /color/],
      ['cursor=%%%', /cursor/, 'invalid_cursor'],
      ['cursor=bm90IGpzb24', /cursor/, 'invalid_cursor'],
      [`cursor=${Buffer.from(JSON.stringify(['2026-02-30T00:00:00.000000Z', 'x'])).toString('base64url')}`, /cursor/, 'invalid_cursor'],
      [`cursor=${Buffer.from(JSON.stringify(['0000-01-01T00:00:00.000000Z', 'x'])).toString('base64url')}`, /cursor/, 'invalid_cursor'],
      ['target=a%00b', /NUL/],
    ];
    for (const [query, detail, code] of cases) {
      const res = await get(query);
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body.detail, query).toMatch(detail);
      if (code) expect(res.body.code, query).toBe(code);
      else expect(res.body.detail, query).toContain(query.split('=')[0]);
    }
    // Bad input to an export too: no file, a problem.
    expect((await get('format=csv&status=exploded')).status).toBe(400);
    expect((await server.runtime.store.head()).position).toBe(head);
  });

  it('keeps a deleted session’s executions out unless an operator or auditor asks for them', async () => {
    const s3 = (await server.request('POST', '/sessions', undefined, as(BOT))).body.session_id;
    const ran = await server.request('POST', `/sessions/${s3}/commands`, { type: 'run', target: 'host:nas', command: 'whoami' }, as(BOT));
    expect(ran.body.status).toBe('succeeded');
    expect((await server.request('DELETE', `/sessions/${s3}`, { reason: 'a test' }, as(ALICE))).status).toBe(200);
    fresh = `min_position=${(await server.runtime.store.head()).position}`;
    expect(await listed(`session=${s3}`)).toEqual([]);
    const kept = await get(`session=${s3}&include_deleted=true`);
    expect(kept.body.executions).toMatchObject([{ id: ran.body.execution_id, session_deleted: true }]);
    const res = await get(`include_deleted=true&session=${s3}`, BOT);
    expect(res.status).toBe(403);
  });

  it('writes CSV fields formula-safe and reads Accept by weight', () => {
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('-1+2')).toBe("'-1+2");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField('a\nb')).toBe('"a\nb"');
    expect(csvField(-1)).toBe('-1');
    expect(csvField(null)).toBe('');
    expect(csvField(false)).toBe('false');
    expect(wantsCsv('text/csv')).toBe(true);
    expect(wantsCsv('text/csv, */*;q=0.1')).toBe(true);
    expect(wantsCsv('application/json, text/csv;q=0.5')).toBe(false);
    expect(wantsCsv('*/*')).toBe(false);
    expect(wantsCsv('text/csv;q=0')).toBe(false);
    expect(wantsCsv(undefined)).toBe(false);
  });
});
