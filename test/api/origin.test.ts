// The origin guard (src/api/origin.ts) over real HTTP: with auth off, a request naming another Host, coming from
// another origin or site, or a POST a browser could send without a preflight is refused with a 4xx that names
// the problem, and nothing is appended.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { PENDING_COMMAND, pendingApproval } from '../support/pending-approval.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** node:http, not fetch: fetch will not send a Host of our choosing. */
function raw(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** A fleet stand-in that runs every command at once and records what it ran: SSH is not under test here. */
const fakeExecutor = instantExecutor();
const started = fakeExecutor.started;

describe.each(databases)('origin guard on $name', (database) => {
  let server: TestServer;
  let approvalId: string;
  const events = async () => (await server.runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n;
  let stateChanging: { method: string; path: string }[];
  /** The approval's status as the server has it. */
  const approvalStatus = async () => {
    const res = await server.request('GET', '/approvals?limit=100');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.approvals as Array<{ id: string; status: string }>).find((a) => a.id === approvalId)?.status;
  };
  /** The approval waits still, nothing ran. */
  const stillPending = async () => {
    expect(await approvalStatus()).toBe('pending');
    expect(started).toEqual([]);
  };

  beforeAll(async () => {
    started.length = 0;
    server = await startTestServer(database, { allowedHosts: ['nomos.lan'], executor: fakeExecutor });
    // A real pending approval for the guard to protect: a config mutation on a registered container waits for an operator.
    approvalId = (await pendingApproval(server)).approval_id;
    const doc = (await server.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    stateChanging = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => ['post', 'put', 'patch', 'delete'].includes(m))
        // The approval routes name the real pending approval; elsewhere any id will do for a refused request.
        .map((m) => ({ method: m.toUpperCase(), path: path.startsWith('/approvals/') ? path.replace(/\{[^}]+\}/g, approvalId) : path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000') })),
    );
    stateChanging.push({ method: 'POST', path: '/mcp' }, { method: 'DELETE', path: '/mcp' });
    expect(await approvalStatus()).toBe('pending');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('reads the state-changing routes from the API document, not a list of its own', () => {
    expect(stateChanging.length).toBeGreaterThan(5);
    expect(stateChanging.some((r) => r.method === 'DELETE')).toBe(true);
    expect(stateChanging).toContainEqual({ method: 'POST', path: `/approvals/${approvalId}/approve` });
  });

  it('refuses a Host that does not name this server, and appends nothing', async () => {
    const before = await events();
    for (const host of ['evil.test', `evil.test:${new URL(server.url).port}`, '10.0.0.5']) {
      const get = await raw(server.url, 'GET', '/sessions', { host });
      expect(get.status, host).toBe(403);
      expect(get.body).toMatchObject({ code: 'foreign_host' });
      expect(get.body.detail ?? get.body.message ?? JSON.stringify(get.body)).toContain('NOMOS_ALLOWED_HOSTS');
      const post = await raw(server.url, 'POST', '/sessions', { host, 'x-nomos-client': 'test' });
      expect(post.status, host).toBe(403);
      const approve = await raw(server.url, 'POST', `/approvals/${approvalId}/approve`, { host, 'content-type': 'application/json' }, '{}');
      expect(approve.status, host).toBe(403);
      expect(approve.body).toMatchObject({ code: 'foreign_host' });
    }
    expect(await events()).toBe(before);
    await stillPending();
  });

  it('admits a host NOMOS_ALLOWED_HOSTS names', async () => {
    const res = await raw(server.url, 'POST', '/sessions', { host: 'nomos.lan', 'x-nomos-client': 'test' });
    expect(res.status).toBe(201);
  });

  it('refuses a foreign Origin on every state-changing route, /mcp included, and appends nothing', async () => {
    const before = await events();
    for (const route of stateChanging) {
      const res = await raw(server.url, route.method, route.path, { origin: 'http://evil.test', 'content-type': 'application/json', 'x-nomos-client': 'test' }, route.method === 'DELETE' ? undefined : '{}');
      expect(res.status, `${route.method} ${route.path}`).toBe(403);
      expect(JSON.stringify(res.body), `${route.method} ${route.path}`).toMatch(/foreign_origin/);
    }
    const approve = await raw(server.url, 'POST', `/approvals/${approvalId}/approve`, { origin: 'https://evil.test', 'content-type': 'application/json' }, '{}');
    expect(approve.status).toBe(403);
    expect(await events()).toBe(before);
    await stillPending();
  });

  it('refuses Sec-Fetch-Site: cross-site without an Origin', async () => {
    const before = await events();
    for (const route of stateChanging) {
      const res = await raw(server.url, route.method, route.path, { 'sec-fetch-site': 'cross-site', 'content-type': 'application/json', 'x-nomos-client': 'test' }, route.method === 'DELETE' ? undefined : '{}');
      expect(res.status, `${route.method} ${route.path}`).toBe(403);
      expect(JSON.stringify(res.body)).toMatch(/cross_site_request/);
    }
    expect(await events()).toBe(before);
    await stillPending();
  });

  it("accepts the server's own origin", async () => {
    const res = await raw(server.url, 'POST', '/sessions', { origin: server.url, 'sec-fetch-site': 'same-origin', 'x-nomos-client': 'test' });
    expect(res.status).toBe(201);
  });

  it('refuses the POSTs a no-cors fetch or a form can send: no JSON type, no X-Nomos-Client', async () => {
    const before = await events();
    for (const [type, body] of [
      ['text/plain', '{"reason":"x"}'],
      ['application/x-www-form-urlencoded', 'reason=x'],
      ['multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-data; name="reason"\r\n\r\nx\r\n--b--\r\n'],
    ] as const) {
      for (const path of ['/sessions', `/approvals/${approvalId}/approve`]) {
        const res = await raw(server.url, 'POST', path, { 'content-type': type }, body);
        expect(res.status, `${type} ${path}`).toBe(415);
        expect(res.body).toMatchObject({ code: 'unsupported_media_type' });
      }
    }
    for (const path of ['/sessions', `/approvals/${approvalId}/approve`]) {
      const bare = await raw(server.url, 'POST', path, {});
      expect(bare.status, path).toBe(400);
      expect(bare.body).toMatchObject({ code: 'client_header_required' });
    }
    expect(await events()).toBe(before);
    await stillPending();
  });

  it('refuses a bearer token while auth is off, saying so', async () => {
    const before = await events();
    const res = await raw(server.url, 'POST', '/sessions', { authorization: 'Bearer some-token-that-would-not-be-checked', 'x-nomos-client': 'test' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'auth_off' });
    expect(JSON.stringify(res.body)).toMatch(/auth is off/);
    expect(await events()).toBe(before);
  });

  it('gives a foreign origin no CORS permission to read', async () => {
    for (const path of ['/sessions', '/approvals']) {
      const res = await raw(server.url, 'GET', path, { origin: 'http://evil.test' });
      expect(res.headers['access-control-allow-origin'], path).toBeUndefined();
      const preflight = await raw(server.url, 'OPTIONS', path, { origin: 'http://evil.test', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-nomos-client' });
      expect(preflight.headers['access-control-allow-origin'], path).toBeUndefined();
    }
  });

  it('approves the same approval from an admitted Host and the own origin: the refusals above were the guard, not the request', async () => {
    const before = await events();
    const res = await raw(server.url, 'POST', `/approvals/${approvalId}/approve`, { host: 'nomos.lan', origin: 'http://nomos.lan', 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' }, '{}');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ approval_id: approvalId, status: 'granted' });
    expect(await approvalStatus()).not.toBe('pending');
    expect(await events()).toBeGreaterThan(before);
    expect(started).toEqual([PENDING_COMMAND]);
  });
});
