// A session's events, tool calls and executions come in keyset pages: `limit` and the cursor of the previous
// page, the next page's address in a Link header. Followed from the first page to the last while more is
// appended between pages, every item comes exactly once and in order; the default and the maximum page hold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_DEFAULT, PAGE_MAX } from '../../src/api/pages.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const nextOf = (headers: Headers): string | null => /<([^>]+)>;\s*rel="next"/.exec(headers.get('link') ?? '')?.[1] ?? null;

describe.each(databases)('pages of a session ($name)', (database) => {
  let server: TestServer;
  let session: string;
  let calls = 0;
  const command = async (body: unknown) => {
    const res = await server.request('POST', `/sessions/${session}/commands`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { position: number };
  };
  const toolCall = () => command({ type: 'record_tool_call_requested', tool_call_id: `call-${++calls}`, name: 'whoami', args: { n: calls } });
  const run = () => command({ type: 'run', target: 'host:box', command: 'uptime' });

  beforeAll(async () => {
    server = await startTestServer(database);
    // No SSH key: each run is recorded as an execution refused unreachable, cheaply.
    expect((await server.request('POST', '/entities', { entities: [{ slug: 'host:box', type: 'host', ssh: { host: '127.0.0.1', port: 1, user: 'root' } }] })).status).toBe(200);
    session = (await server.request('POST', '/sessions')).body.session_id;
    for (let i = 0; i < 23; i++) await toolCall();
    for (let i = 0; i < 11; i++) await run();
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  /** Follows Link rel="next" from `first`, calling `between` after each page; the pages' items and count. */
  async function follow<T>(first: string, items: (body: any) => T[], between: () => Promise<unknown>, position: () => string) {
    const seen: T[] = [];
    let pages = 0;
    for (let url: string | null = first; url !== null; ) {
      const res = await server.request('GET', `${url}${url.includes('?') ? '&' : '?'}${position()}`.replace(/[?&]$/, ''));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const page = items(res.body);
      pages += 1;
      seen.push(...page);
      url = nextOf(res.headers);
      if (!Array.isArray(res.body)) expect(res.body.next_cursor === null).toBe(url === null);
      if (url !== null) {
        expect(page).toHaveLength(7);
        await between();
      }
    }
    return { seen, pages };
  }

  it('events: every event once, in stream order, with events appended between pages', async () => {
    let appended = 0;
    const { seen, pages } = await follow(`/sessions/${session}/events?limit=7`, (b) => b.events as Array<{ stream_position: number; event_id: string }>, async () => {
      if (appended++ < 3) await toolCall();
    }, () => '');
    const whole = (await server.runtime.store.readStream(`session-${session}`)).events;
    expect(seen.map((e) => e.event_id)).toEqual(whole.map((e) => e.eventId));
    expect(seen.map((e) => e.stream_position)).toEqual(whole.map((_, i) => i));
    expect(pages).toBe(Math.ceil(whole.length / 7));
  });

  it('tool calls: a bare array per page, every call once in seq order, with calls recorded between pages', async () => {
    let last = 0;
    const { seen } = await follow(`/sessions/${session}/tool_calls?limit=7`, (b) => b as Array<{ id: string; seq: number }>, async () => {
      last = (await toolCall()).position;
    }, () => (last > 0 ? `min_position=${last}` : ''));
    expect(seen.map((c) => c.seq)).toEqual(seen.map((_, i) => i + 1));
    expect(new Set(seen.map((c) => c.id)).size).toBe(calls);
    expect(seen).toHaveLength(calls);
  });

  it('executions: every execution once in the order requested, with runs between pages', async () => {
    let last = 0;
    let runs = 11;
    const { seen } = await follow(`/sessions/${session}/executions?limit=7`, (b) => b.executions as Array<{ id: string }>, async () => {
      last = (await run()).position;
      runs += 1;
    }, () => (last > 0 ? `min_position=${last}` : ''));
    expect(seen).toHaveLength(runs);
    expect(new Set(seen.map((e) => e.id)).size).toBe(runs);
  });

  it(`answers at most ${PAGE_DEFAULT} by default and refuses a limit over ${PAGE_MAX} or a bad cursor`, async () => {
    const big = (await server.request('POST', '/sessions')).body.session_id as string;
    const events = Array.from({ length: PAGE_DEFAULT + 20 }, (_, i) => ({ type: 'Noted', data: { i }, metadata: {} }));
    await server.runtime.store.append(`session-${big}`, events, { expectedVersion: 'any' });
    const first = await server.request('GET', `/sessions/${big}/events`);
    expect(first.body.events).toHaveLength(PAGE_DEFAULT);
    expect(nextOf(first.headers)).toBe(`/sessions/${big}/events?limit=${PAGE_DEFAULT}&cursor=${PAGE_DEFAULT}`);
    const second = await server.request('GET', nextOf(first.headers)!);
    expect(second.body.events.length).toBe(21); // 20 more, and the SessionStarted the append joined
    expect(second.body.next_cursor).toBeNull();
    for (const path of ['events', 'tool_calls', 'executions']) {
      expect((await server.request('GET', `/sessions/${session}/${path}?limit=${PAGE_MAX + 1}`)).status).toBe(400);
      const bad = await server.request('GET', `/sessions/${session}/${path}?cursor=abc`);
      expect(bad.status).toBe(400);
      expect(bad.body.detail).toMatch(/cursor/);
    }
  });
});
