// The sessions API over real HTTP on a real database: a scripted client drives sessions end to end and reads
// aggregates, blocker and closed_at from the list without ever reading a transcript.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

describe.each(databases)('sessions API on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(async () => {
    await server?.close();
  });

  let lastCreated = 0;
  async function create(): Promise<string> {
    const res = await server.request('POST', '/sessions');
    expect(res.status).toBe(201);
    expect(res.body.session_id).toMatch(/^[0-9a-f-]{36}$/);
    lastCreated = res.body.position;
    return res.body.session_id;
  }
  async function command(id: string, body: Record<string, unknown>, expected = 200) {
    const res = await server.request('POST', `/sessions/${id}/commands`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(expected);
    return res.body;
  }

  it('drives a whole session and reads it back with read-your-writes', async () => {
    const id = await create();
    const u1 = await command(id, { type: 'post_user_message', text: 'rclone backup is broken' });
    expect(u1.events).toEqual(['UserMessagePosted']);
    expect(typeof u1.position).toBe('number');
    const goal = await command(id, { type: 'set_goal', goal: 'Fix the rclone backup so it completes instead of OOM-killing' });
    expect(goal.title).toBe('Fix the rclone backup so it completes instead of OOM-killing');
    expect(goal.recent_unfinished_sessions).toEqual(expect.any(Array));
    const plan = await command(id, { type: 'propose_plan', steps: [{ title: 'inspect timer' }, { title: 'raise memory' }] });
    expect(plan.generation).toBe(1);
    await command(id, { type: 'update_plan_step', seq: 1, status: 'running' });
    await command(id, { type: 'record_tool_call_requested', tool_call_id: 'tc1', name: 'run', args: { target: 'lxc:rclone', command: 'systemctl status rclone-backup.timer' } });
    await command(id, { type: 'record_tool_call_completed', tool_call_id: 'tc1', result: { exit_code: 0, stdout: 'active' } });
    await command(id, { type: 'record_tool_call_requested', tool_call_id: 'tc2', name: 'get_entity', args: { slug: 'host:strong' } });
    await command(id, { type: 'record_tool_call_completed', tool_call_id: 'tc2', error: 'no such entity' });
    await command(id, { type: 'record_assistant_message', text: 'The timer is active; memory is the suspect.' });
    const done = await command(id, { type: 'complete_task', outcome: 'partial', summary: 'diagnosed OOM, fix is queued for approval' });
    expect(done.status).toBe('done');
    expect(done.closed_steps).toEqual([
      { generation: 1, seq: 1, status: 'skipped' },
      { generation: 1, seq: 2, status: 'skipped' },
    ]);
    await command(id, { type: 'record_assistant_message', text: 'Both commands are queued for approval.' });
    const last = await command(id, { type: 'record_assistant_message', text: 'Both commands are queued for approval; nothing more to do.' });

    const detail = await server.request('GET', `/sessions/${id}?min_position=${last.position}`);
    expect(detail.status).toBe(200);
    expect(detail.body.as_of_position).toBeGreaterThanOrEqual(last.position);
    expect(Number(detail.headers.get('x-nomos-as-of-position'))).toBe(detail.body.as_of_position);
    const s = detail.body.session;
    expect(s).toMatchObject({
      id,
      title: 'Fix the rclone backup so it completes instead of OOM-killing',
      status: 'done',
      outcome: 'partial',
      summary: 'diagnosed OOM, fix is queued for approval',
      message_count: 2,
      user_message_count: 1,
      assistant_message_count: 1,
      tool_call_count: 2,
      turn_count: 1,
      entities: ['host:strong', 'lxc:rclone'],
    });
    // Its words say "queued for approval", but no approval was requested in it: the facts win.
    expect(s.blocker).toBe('unknown');
    expect(s.closed_at).not.toBeNull();
    expect(Date.parse(s.last_active_at)).toBeGreaterThanOrEqual(Date.parse(s.closed_at));
    expect(s.top_tools).toEqual([
      { name: 'get_entity', count: 1 },
      { name: 'run', count: 1 },
    ]);
    // The old API's shape: `jq '[.messages[].content.tool_calls | length] | add'` counts the tool calls.
    const counted = detail.body.messages.map((m: any) => m.content.tool_calls.length).reduce((a: number, b: number) => a + b, 0);
    expect(counted).toBe(2);
    expect(detail.body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant']);
    expect(detail.body.messages[1].content.text).toBe('Both commands are queued for approval; nothing more to do.');

    const calls = await server.request('GET', `/sessions/${id}/tool_calls`);
    expect(calls.status).toBe(200);
    expect(calls.body.map((c: any) => [c.id, c.status, c.seq])).toEqual([
      ['tc1', 'completed', 1],
      ['tc2', 'failed', 2],
    ]);
    expect(calls.headers.get('x-nomos-as-of-position')).toMatch(/^\d+$/);

    const planView = await server.request('GET', `/sessions/${id}/plan`);
    expect(planView.body.steps.map((st: any) => st.status)).toEqual(['skipped', 'skipped']);
    expect(planView.body.goals[0]).toMatchObject({ status: 'completed', outcome: 'partial' });

    const events = await server.request('GET', `/sessions/${id}/events`);
    expect(events.body.events[0].type).toBe('SessionStarted');
    expect(events.body.events.at(-1).position).toBe(last.position);
    expect(events.body.events[1].metadata).toMatchObject({ actor: { role: 'operator' }, schema_version: 1 });

    // Reading never moves closed_at or last_active_at.
    const again = await server.request('GET', `/sessions/${id}`);
    expect(again.body.session.closed_at).toBe(s.closed_at);
    expect(again.body.session.last_active_at).toBe(s.last_active_at);
  });

  it('lists with every filter and an index-friendly keyset page', async () => {
    const ok = await create();
    await command(ok, { type: 'set_goal', goal: 'apt upgrade host:netbird-vps' });
    await command(ok, { type: 'record_tool_call_requested', tool_call_id: 'a', name: 'run', args: { target: 'host:netbird-vps', command: 'apt list --upgradable' } });
    await command(ok, { type: 'complete_task', outcome: 'success', summary: '92 → 0 packages' });
    const failed = await create();
    await command(failed, { type: 'set_goal', goal: 'inspect rclone timer' });
    await command(failed, { type: 'record_tool_call_requested', tool_call_id: 'b', name: 'run', args: { target: 'lxc:rclone', command: 'x' } });
    await command(failed, { type: 'record_assistant_message', text: "I can't run that: no tool supports it." });
    const end = await command(failed, { type: 'complete_task', outcome: 'failed', summary: 'gave up' });
    const open = await create();
    const last = await command(open, { type: 'post_user_message', text: 'hello' });

    const q = async (query: string) => {
      const res = await server.request('GET', `/sessions?min_position=${Math.max(last.position, end.position)}&${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.sessions.map((x: any) => x.id);
    };
    expect(await q('outcome=success')).toContain(ok);
    expect(await q('outcome=success')).not.toContain(failed);
    expect(await q('status=failed')).toEqual(expect.arrayContaining([failed]));
    expect(await q('status=active')).toContain(open);
    expect(await q('status=active')).not.toContain(ok);
    expect(await q('entity_id=lxc:rclone')).toContain(failed);
    expect(await q('entity_id=lxc:rclone')).not.toContain(ok);
    expect(await q('blocker=missing_capability')).toEqual([failed]);
    expect(await q('since=1h')).toEqual(expect.arrayContaining([ok, failed, open]));
    expect(await q('since=2999-01-01T00:00:00Z')).toEqual([]);
    // A look back longer than history means everything, not an error.
    expect(await q('since=999999d')).toEqual(expect.arrayContaining([ok, failed, open]));
    expect(await q(`since=${new Date(Date.now() - 3600_000).toISOString()}`)).toContain(open);
    // An empty parameter, as a script with an unset variable sends it, counts as not given.
    const blank = await server.request('GET', '/sessions?cursor=&since=&outcome=&limit=');
    expect(blank.status).toBe(200);
    expect(blank.body.sessions.length).toBeGreaterThanOrEqual(3);
    const limited = await server.request('GET', '/sessions?limit=1');
    expect(limited.body.sessions).toHaveLength(1);
    expect(typeof limited.body.next_cursor).toBe('string');
    expect(limited.body.as_of_position).toEqual(expect.any(Number));
  });

  it('narrows each session to the fields asked for, and keeps the full view otherwise', async () => {
    const id = await create();
    await command(id, { type: 'set_goal', goal: 'check the backups' });
    await command(id, { type: 'record_tool_call_requested', tool_call_id: 'f', name: 'run', args: { target: 'host:strong', command: 'ls' } });
    const end = await command(id, { type: 'complete_task', outcome: 'partial', summary: 'timed out: approval expired' });
    const full = await server.request('GET', `/sessions?min_position=${end.position}&limit=1000`);
    const view = full.body.sessions.find((x: any) => x.id === id);
    // Every field, in this order, with ISO timestamps as toISOString writes them.
    expect(Object.keys(view)).toEqual([
      'id', 'title', 'goal', 'status', 'outcome', 'summary', 'blocker', 'blocker_evidence', 'pending_approvals', 'approvals_requested',
      'approvals_expired', 'message_count', 'user_message_count', 'assistant_message_count', 'tool_call_count', 'turn_count', 'top_tools',
      'entities', 'executions_count', 'failed_executions', 'targets', 'created_at', 'last_active_at', 'closed_at', 'duration_seconds',
      'owner', 'deleted', 'deleted_at', 'deleted_by', 'model_calls', 'input_tokens', 'output_tokens', 'cached_input_tokens',
      'closed_by', 'outcome_disputed', 'dispute',
    ]);
    expect(view).toMatchObject({ goal: 'check the backups', outcome: 'partial', tool_call_count: 1, top_tools: [{ name: 'run', count: 1 }], entities: ['host:strong'] });
    for (const at of [view.created_at, view.last_active_at, view.closed_at]) expect(new Date(at).toISOString()).toBe(at);
    if (view.blocker_evidence !== null) expect(Object.keys(view.blocker_evidence)).toEqual(['source', 'detail']);

    const narrow = await server.request('GET', `/sessions?limit=1000&fields=outcome,tool_call_count,top_tools`);
    expect(narrow.status).toBe(200);
    const picked = narrow.body.sessions.find((x: any) => x.id === id);
    expect(picked).toEqual({ id, outcome: 'partial', tool_call_count: 1, top_tools: [{ name: 'run', count: 1 }] });
    expect(narrow.body.sessions.every((x: any) => Object.keys(x).length === 4)).toBe(true);
  });

  it('stamps a list page, even an empty one, with the position it reflects, in the body and the header', async () => {
    const id = await create();
    const { position } = await command(id, { type: 'set_goal', goal: 'stamp me' });
    for (const query of [`min_position=${position}&limit=1`, `min_position=${position}&blocker=no_such_blocker`, `min_position=${position}&since=1h&outcome=success`]) {
      const res = await server.request('GET', `/sessions?${query}`);
      expect(res.status, query).toBe(200);
      expect(res.body.as_of_position, query).toBeGreaterThanOrEqual(position);
      expect(Number(res.headers.get('x-nomos-as-of-position')), query).toBe(res.body.as_of_position);
    }
    const empty = await server.request('GET', `/sessions?min_position=${position}&blocker=no_such_blocker`);
    expect(empty.body).toEqual({ sessions: [], next_cursor: null, as_of_position: expect.any(Number) });
  });

  it('lists each session as GET /sessions/:id shows it, keys in the same order, strings escaped whatever they hold (the database writes the list JSON)', async () => {
    const id = await create();
    const goal = 'back "ups" \\ C:\\tmp\n\ttab \u0001\u001f ✓ 🙂 </script> \u2028 end';
    await command(id, { type: 'set_goal', goal });
    await command(id, { type: 'record_tool_call_requested', tool_call_id: 'q', name: 'run', args: { target: 'lxc:rclone', command: 'rclone sync a b' } });
    // A summary the blocker rules read: its evidence quotes it back, escapes and all.
    const end = await command(id, { type: 'complete_task', outcome: 'failed', summary: 'gave up "early": permission denied on C:\\tmp \u2028 ✓' });
    const list = await server.request('GET', `/sessions?min_position=${end.position}&limit=1000`);
    expect(list.status).toBe(200);
    expect(list.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const listed = list.body.sessions.find((x: any) => x.id === id);
    expect(listed.goal).toBe(goal);
    const one = await server.request('GET', `/sessions/${id}`);
    expect(listed).toEqual(one.body.session);
    expect(Object.keys(listed)).toEqual(Object.keys(one.body.session));
    expect(listed.blocker_evidence).not.toBeNull();
  });

  it('pages a since window the same whichever way the server scans it (many matches, then the last few)', async () => {
    let last = 0;
    for (let i = 0; i < 9; i++) last = (await command(await create(), { type: 'post_user_message', text: `n${i}` })).position;
    const all = await server.request('GET', `/sessions?min_position=${last}&limit=1000&fields=id`);
    const expected = all.body.sessions.map((x: any) => x.id);
    expect(expected.length).toBeGreaterThanOrEqual(9);
    const pages = async (query: string, limit: number) => {
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await server.request('GET', `/sessions?${query}&limit=${limit}&fields=id${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        paged.push(...page.body.sessions.map((x: any) => x.id));
        cursor = page.body.next_cursor;
      } while (cursor !== null);
      return paged;
    };
    // limit 1: every page but the last sees more matches after its cursor than it holds.
    expect(await pages('since=1h', 1)).toEqual(expected);
    expect(await pages('since=1h', 2)).toEqual(expected);
    // With other filters too: matches of since alone outnumber a page where matches of everything do not.
    for (const filter of ['status=active', 'status=done', 'outcome=partial', 'entity_id=host:nope']) {
      const whole = await server.request('GET', `/sessions?since=1h&${filter}&limit=1000&fields=id`);
      const unpaged = (await server.request('GET', `/sessions?${filter}&limit=1000&fields=id`)).body.sessions.map((x: any) => x.id);
      expect(whole.body.sessions.map((x: any) => x.id)).toEqual(unpaged.filter((id: string) => expected.includes(id)));
      expect(await pages(`since=1h&${filter}`, 1)).toEqual(whole.body.sessions.map((x: any) => x.id));
    }
  });

  it('names the next page in a Link header: the same filters and fields, the next cursor, since as the time it stood for', async () => {
    const first = await server.request('GET', '/sessions?since=1h&limit=2&fields=outcome,turn_count');
    expect(first.status).toBe(200);
    const linkOf = (headers: Headers) => /^<(\/sessions\?[^>]+)>; rel="next"$/.exec(headers.get('link') ?? '')?.[1] ?? null;
    const firstLink = linkOf(first.headers);
    expect(firstLink).not.toBeNull();
    const next = new URL(firstLink!, 'http://nomos');
    expect(next.searchParams.get('cursor')).toBe(first.body.next_cursor);
    expect(next.searchParams.get('limit')).toBe('2');
    expect(next.searchParams.get('fields')).toBe('outcome,turn_count');
    const since = next.searchParams.get('since')!;
    expect(since).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Math.abs(Date.parse(since) - (Date.now() - 3_600_000))).toBeLessThan(60_000);
    // Following the links pages exactly what one page with that since holds; the last page names none.
    const whole = await server.request('GET', `/sessions?since=${since}&limit=1000&fields=id`);
    expect(whole.headers.get('link')).toBeNull();
    const paged: string[] = first.body.sessions.map((x: any) => x.id);
    for (let path: string | null = firstLink; path !== null; ) {
      const page = await server.request('GET', path);
      expect(page.status).toBe(200);
      expect(Object.keys(page.body.sessions[0]).sort()).toEqual(['id', 'outcome', 'turn_count']);
      paged.push(...page.body.sessions.map((x: any) => x.id));
      path = linkOf(page.headers);
      expect(path === null).toBe(page.body.next_cursor === null);
    }
    expect(paged).toEqual(whole.body.sessions.map((x: any) => x.id));
  });

  it('pages each session exactly once while sessions are being written', async () => {
    const before: string[] = [];
    for (let i = 0; i < 25; i++) before.push(await create());
    const projectedUpTo = lastCreated;
    let writing = true;
    const writer = (async () => {
      let n = 0;
      while (writing && n < 200) {
        n++;
        const id = await create();
        await command(before[n % before.length]!, { type: 'post_user_message', text: `ping ${n}` });
        await command(id, { type: 'set_goal', goal: `new ${n}` });
      }
    })();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      // The first page waits until every session created before paging began is projected.
      const res = await server.request('GET', `/sessions?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : `&min_position=${projectedUpTo}`}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.sessions.map((x: any) => x.id));
      cursor = res.body.next_cursor;
      await new Promise((r) => setTimeout(r, 5));
    } while (cursor);
    writing = false;
    await writer;
    expect(new Set(seen).size).toBe(seen.length);
    // Every session that existed before paging began is on some page, exactly once.
    expect(before.filter((id) => seen.includes(id))).toEqual(before);
  });

  it('retries optimistic-concurrency conflicts: 20 concurrent writers on one session lose nothing', async () => {
    const id = await create();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => server.request('POST', `/sessions/${id}/commands`, { type: 'post_user_message', text: `m${i}` })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const maxPos = Math.max(...results.map((r) => r.body.position));
    const res = await server.request('GET', `/sessions/${id}?min_position=${maxPos}`);
    expect(res.body.session.user_message_count).toBe(20);
  });

  it('takes the blocker from the summary when the last message names no cause', async () => {
    const id = await create();
    await command(id, { type: 'record_assistant_message', text: 'The timer is fine; the container runs out of memory.' });
    const done = await command(id, { type: 'complete_task', outcome: 'partial', summary: 'diagnosed OOM; there is no tool to resize the container' });
    const res = await server.request('GET', `/sessions/${id}?min_position=${done.position}`);
    expect(res.body.session).toMatchObject({ blocker: 'missing_capability', blocker_evidence: { source: 'summary', detail: 'there is no tool to' } });
  });

  it('sets aside a summary saying "queued for approval" when no approval was ever requested: the facts win, and the blocker is unknown, never null', async () => {
    const id = await create();
    await command(id, { type: 'record_assistant_message', text: 'The timer is fine; the container runs out of memory.' });
    const done = await command(id, { type: 'complete_task', outcome: 'partial', summary: 'diagnosed OOM; memory change queued for approval' });
    const res = await server.request('GET', `/sessions/${id}?min_position=${done.position}`);
    expect(res.body.session.blocker).toBe('unknown');
    expect(res.body.session.blocker_evidence).toMatchObject({ source: 'none' });
    expect(res.body.session.blocker_evidence.detail).toContain("set aside: 'queued for approval' (summary: no approval was requested)");
  });

  it('stores command output carrying NUL characters (which PostgreSQL cannot hold) as U+FFFD instead of failing', async () => {
    const id = await create();
    await command(id, { type: 'record_tool_call_requested', tool_call_id: 'nul', name: 'run', args: { command: 'cat /proc/1/cmdline' } });
    const done = await command(id, { type: 'record_tool_call_completed', tool_call_id: 'nul', result: { stdout: 'init\u0000--system\u0000', 'key\u0000': '\\u0000 stays literal' }, error: 'exit\u0000' });
    const calls = await server.request('GET', `/sessions/${id}/tool_calls?min_position=${done.position}`);
    expect(calls.status).toBe(200);
    expect(calls.body[0]).toMatchObject({ result: { stdout: 'init\uFFFD--system\uFFFD', 'key\uFFFD': '\\u0000 stays literal' }, error: 'exit\uFFFD', status: 'failed' });
  });

  it('deletes with a tombstone: lists drop the session, an operator still reads it marked with include_deleted=true, its events stay', async () => {
    const id = await create();
    await command(id, { type: 'set_goal', goal: 'temporary' });
    const del = await server.request('DELETE', `/sessions/${id}`);
    expect(del.status).toBe(200);
    expect(del.body.events).toEqual(['SessionDeleted']);
    const hidden = await server.request('GET', `/sessions/${id}?min_position=${del.body.position}`);
    expect(hidden.status).toBe(404);
    expect(hidden.body.code).toBe('session_deleted');
    const read = await server.request('GET', `/sessions/${id}?include_deleted=true&min_position=${del.body.position}`);
    expect(read.status).toBe(200);
    expect(read.body.session).toMatchObject({ deleted: true, deleted_by: { role: 'operator', id: 'anonymous' } });
    const list = await server.request('GET', `/sessions?limit=200&min_position=${del.body.position}`);
    expect(list.body.sessions.map((x: any) => x.id)).not.toContain(id);
    const events = await server.request('GET', `/sessions/${id}/events`);
    expect(events.body.events.map((e: any) => e.type)).toEqual(['SessionStarted', 'GoalSet', 'SessionDeleted']);
    const after = await server.request('POST', `/sessions/${id}/commands`, { type: 'post_user_message', text: 'x' });
    expect(after.status).toBe(404);
    expect(after.body.code).toBe('session_deleted');
  });

  it('answers 503 with the lag when min_position is not reached in time', async () => {
    const res = await server.request('GET', '/sessions?min_position=999999999');
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('projection_lag');
    expect(res.body.as_of_position).toEqual(expect.any(Number));
  }, 15_000);

  it('reports health and projection progress', async () => {
    const health = await server.request('GET', '/healthz');
    expect(health.body.status).toBe('ok');
    const proj = await server.request('GET', '/projections');
    expect(proj.body.projections.map((p: any) => p.name).sort()).toEqual(['entities', 'executions', 'knowledge', 'model_calls', 'plans', 'sessions', 'transcript']);
    for (const p of proj.body.projections) expect(p).toMatchObject({ version: expect.any(Number), position: expect.any(Number), lag: expect.any(Number) });
  });
});
