// What the web console reads beside the long-standing API: who the caller is (GET /me), the log's head as it
// moves (GET /changes, an event stream), a session's executions and approvals, and the console's own files —
// served to anyone (the page loads before sign-in) while every API route still wants a token.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { databases } from '../support/databases.ts';
import { SseClient } from '../support/sse-client.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,agent:nomos:agent-secret-1-long-enough-for-32-chars,auditor:audit:audit-secret-1-long-enough-for-32-chars');
const as = (token: string) => ({ authorization: `Bearer ${token}` });

describe.each(databases)('console reads on $name', (database) => {
  let server: TestServer;
  let console_: string;
  beforeAll(async () => {
    // A console build of its own, so this suite does not depend on web/dist.
    console_ = mkdtempSync(join(tmpdir(), 'nomos-console-'));
    writeFileSync(join(console_, 'index.html'), '<!doctype html><title>Nomos</title>');
    process.env.NOMOS_TEST_CONSOLE_DIR_SAVED = process.env.NOMOS_TEST_CONSOLE_DIR ?? '';
    process.env.NOMOS_TEST_CONSOLE_DIR = console_;
    server = await startTestServer(database, { tokens });
    process.env.NOMOS_TEST_CONSOLE_DIR = process.env.NOMOS_TEST_CONSOLE_DIR_SAVED;
    if (process.env.NOMOS_TEST_CONSOLE_DIR === '') delete process.env.NOMOS_TEST_CONSOLE_DIR;
  });
  afterAll(async () => {
    await server?.close();
    rmSync(console_, { recursive: true, force: true });
  });

  it('serves the console without a token, with a same-origin-only policy, and nothing else without one', async () => {
    const page = await fetch(`${server.url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>Nomos</title>');
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect((await fetch(`${server.url}/index.html`)).status).toBe(200);
    for (const path of ['/me', '/sessions', '/changes', '/approvals', '/projections']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe('unauthenticated');
    }
    // A file the build does not have is no route at all: like any unknown path, it wants a token, then is a 404.
    expect((await fetch(`${server.url}/assets/nothing.js`)).status).toBe(401);
    const missing = await fetch(`${server.url}/assets/nothing.js`, { headers: as('audit-secret-1-long-enough-for-32-chars') });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/problem\+json/);
  });

  it('says who the caller is, by the token', async () => {
    expect((await server.request('GET', '/me', undefined, as('op-secret-1-long-enough-for-32-chars'))).body).toEqual({ role: 'operator', name: 'alice', auth: true });
    expect((await server.request('GET', '/me', undefined, as('audit-secret-1-long-enough-for-32-chars'))).body).toEqual({ role: 'auditor', name: 'audit', auth: true });
    expect((await server.request('GET', '/me', undefined, as('not-a-token-9'))).status).toBe(401);
  });

  it('streams the position the read models reached as the log moves, one message for a burst', async () => {
    const before = (await server.runtime.store.head()).position;
    const feed = await SseClient.connect(`${server.url}/changes`, as('audit-secret-1-long-enough-for-32-chars'));
    try {
      expect(feed.status).toBe(200);
      expect(feed.headers['content-type']).toMatch(/text\/event-stream/);
      await feed.waitFor('the head now', (m) => m.length >= 1);
      expect(feed.messages[0]!.data).toEqual({ position: before });
      expect(feed.messages[0]!.id).toBe(String(before));

      const created = await server.request('POST', '/sessions', undefined, as('agent-secret-1-long-enough-for-32-chars'));
      const id = created.body.session_id as string;
      const burst = await Promise.all(
        ['one', 'two', 'three', 'four'].map((text) => server.request('POST', `/sessions/${id}/commands`, { type: 'post_user_message', text }, as('agent-secret-1-long-enough-for-32-chars'))),
      );
      const last = Math.max(...burst.map((r) => r.body.position as number));
      await feed.waitFor('the burst', (m) => m.some((x) => x.data.position >= last));
      const positions = feed.messages.map((m) => m.data.position as number);
      // In order, never repeated, and far fewer messages than events (a burst is one re-read, not five).
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect(new Set(positions).size).toBe(positions.length);
      expect(positions.length).toBeLessThan(1 + 5);
      // The position is the read models': a read made on the message, with no min_position, already shows the burst.
      const read = await server.request('GET', `/sessions/${id}`, undefined, as('audit-secret-1-long-enough-for-32-chars'));
      expect(read.body.as_of_position).toBeGreaterThanOrEqual(last);
      expect(read.body.session.user_message_count).toBe(4);
    } finally {
      await feed.abort();
    }
  });

  it("lists a session's executions and approvals, and names bad ids and unknown sessions", async () => {
    const created = await server.request('POST', '/sessions', undefined, as('agent-secret-1-long-enough-for-32-chars'));
    const id = created.body.session_id as string;
    // A 2xx does not yet mean the read models show it: read at the write's position.
    const executions = await server.request('GET', `/sessions/${id}/executions?min_position=${created.body.position}`, undefined, as('audit-secret-1-long-enough-for-32-chars'));
    expect(executions.status).toBe(200);
    expect(executions.body).toMatchObject({ session_id: id, executions: [] });
    expect(typeof executions.body.as_of_position).toBe('number');

    const approvals = await server.request('GET', `/approvals?session_id=${id}`, undefined, as('audit-secret-1-long-enough-for-32-chars'));
    expect(approvals.status).toBe(200);
    expect(approvals.body.approvals).toEqual([]);

    const unknown = await server.request('GET', '/sessions/00000000-0000-4000-8000-000000000000/executions', undefined, as('audit-secret-1-long-enough-for-32-chars'));
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('session_not_found');
    const bad = await server.request('GET', '/approvals?session_id=nope', undefined, as('audit-secret-1-long-enough-for-32-chars'));
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/session_id must be a UUID/);
  });
});

describe('an unbuilt console', () => {
  let server: TestServer;
  beforeAll(async () => {
    process.env.NOMOS_TEST_CONSOLE_DIR_SAVED = process.env.NOMOS_TEST_CONSOLE_DIR ?? '';
    process.env.NOMOS_TEST_CONSOLE_DIR = join(tmpdir(), 'nomos-no-console-here');
    server = await startTestServer(databases[0]!);
    process.env.NOMOS_TEST_CONSOLE_DIR = process.env.NOMOS_TEST_CONSOLE_DIR_SAVED;
    if (process.env.NOMOS_TEST_CONSOLE_DIR === '') delete process.env.NOMOS_TEST_CONSOLE_DIR;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers / with 503 saying how to build it, and the API works on', async () => {
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(503);
    expect(await res.text()).toMatch(/npm run build:web/);
    expect((await server.request('GET', '/healthz')).status).toBe(200);
  });
});
