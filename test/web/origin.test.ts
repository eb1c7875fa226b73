// The origin guard (src/api/origin.ts, docs/security.md) against a real browser: Debian's Chromium, told to resolve
// evil.test and rebind.test to 127.0.0.1. A page of another origin (http://evil.test:PORT2/, served by a second
// HTTP server) tries what a browser lets any page try against the console's server: a no-cors POST with a
// text/plain body, a CORS fetch with JSON, a form, reading GET /approvals. A page loaded under a rebound name
// (http://rebind.test:PORT/, the server's own port, so same-origin in the browser's eyes) tries the same. A real
// approval waits throughout: after each attempt the server still has it pending and its log has not moved. The
// console's own origin then approves it with the very same request, so the test shows the refusals are the
// guard's and not a request that could never work.
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM } from '../support/browser.ts';
import { databases } from '../support/databases.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { PENDING_COMMAND, pendingApproval } from '../support/pending-approval.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

/** A fleet stand-in that runs every command at once and counts what it was asked to run: SSH is not under test here. */
const fakeExecutor = instantExecutor();
const started = fakeExecutor.started;

interface Attempt {
  /** What the page could read of the answer: null when the browser refused to let it read anything. */
  status: number | null;
  type?: string;
  body?: string;
  error?: string;
}

describe.each(databases)('requests from other origins, in a real browser, on $name', (database) => {
  let server: TestServer;
  let evil: Server;
  let browser: Browser;
  let port: string;
  let evilOrigin: string;
  let approval: string;
  let execution: string;

  const head = async () => (await server.runtime.store.head()).position;
  /** The approval as the server has it, read by the test, not by the browser. */
  const status = async () => {
    const res = await server.request('GET', '/approvals?limit=100');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.approvals as Array<{ id: string; status: string }>).find((a) => a.id === approval)?.status;
  };
  /** Runs an attempt, then requires that nothing changed on the server. */
  const unchanged = async <T>(what: string, attempt: () => Promise<T>): Promise<T> => {
    const before = await head();
    const result = await attempt();
    // Give a request the browser sent but did not wait for (a form, a no-cors POST) time to be answered.
    await new Promise((r) => setTimeout(r, 300));
    expect(await status(), what).toBe('pending');
    expect(await head(), what).toBe(before);
    expect(started, what).toEqual([]);
    return result;
  };
  const open = async (url: string): Promise<{ page: Page; responses: Array<{ url: string; method: string; status: number }> }> => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const responses: Array<{ url: string; method: string; status: number }> = [];
    page.on('response', (r) => responses.push({ url: r.url(), method: r.request().method(), status: r.status() }));
    await page.goto(url);
    return { page, responses };
  };
  /** fetch() in the page; what it could read of the answer. */
  const tryFetch = (page: Page, url: string, init: Record<string, unknown>): Promise<Attempt> =>
    page.evaluate(
      async ([u, i]) => {
        try {
          const res = await fetch(u, i);
          return { status: res.status, type: res.type, body: await res.text() };
        } catch (error) {
          return { status: null, error: String(error) };
        }
      },
      [url, init] as const,
    );
  /** A form posted into a hidden frame, as a page would to change state without script access to the answer. */
  const submitForm = async (page: Page, action: string, enctype: string) => {
    const answered = page.waitForResponse((r) => r.url() === action && r.request().method() === 'POST', { timeout: 5_000 });
    // Resolves when the frame has loaded the answer; then the page tries to look into it.
    const readable = await page.evaluate(
      ([a, e]) =>
        new Promise<string | null>((resolve) => {
          const d = (globalThis as any).document;
          const frame = d.createElement('iframe');
          frame.name = `sink-${Math.random()}`;
          d.body.append(frame);
          const form = d.createElement('form');
          form.method = 'POST';
          form.action = a;
          form.enctype = e;
          form.target = frame.name;
          const input = d.createElement('input');
          input.name = '{"reason":"';
          input.value = 'x"}';
          form.append(input);
          d.body.append(form);
          frame.addEventListener('load', () => {
            // What the frame got is another origin's document: the page cannot look into it.
            try {
              resolve(frame.contentDocument?.body?.textContent ?? null);
            } catch {
              resolve(null);
            }
          });
          form.submit();
        }),
      [action, enctype] as const,
    );
    const response = await answered;
    return { status: response.status(), readable };
  };

  beforeAll(async () => {
    started.length = 0;
    server = await startTestServer(database, { executor: fakeExecutor });
    port = new URL(server.url).port;
    // A real approval: a config mutation on a registered container waits for an operator (nothing connects anywhere).
    ({ approval_id: approval, execution_id: execution } = await pendingApproval(server, 'Fix the data directory owner'));
    expect(await status()).toBe('pending');

    // The other origin: a page of its own, on another port, under a name that resolves to this machine.
    evil = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>not nomos</title><body><p>a page of another origin</p></body>');
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilOrigin = `http://evil.test:${(evil.address() as AddressInfo).port}`;

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage', '--host-resolver-rules=MAP evil.test 127.0.0.1, MAP rebind.test 127.0.0.1'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => (evil ? evil.close(r) : r(undefined)));
    await server?.close();
  });

  it('a page of another origin can neither read the approvals nor approve one, by fetch or by form', async () => {
    const { page, responses } = await open(`${evilOrigin}/`);
    expect(await page.title()).toBe('not nomos');
    // The server under two names: its loopback address (cross-site) and evil.test on its port (same site, other origin).
    for (const base of [server.url, `http://evil.test:${port}`]) {
      const approve = `${base}/approvals/${approval}/approve`;

      // Reading: the browser sends the GET, the server grants no CORS permission, the page gets nothing.
      const read = await unchanged(`read ${base}`, () => tryFetch(page, `${base}/approvals`, {}));
      expect(read.status, JSON.stringify(read)).toBeNull();
      expect(read.error).toMatch(/Failed to fetch/);

      // A no-cors POST with a text/plain body: sent without a preflight, the answer opaque to the page.
      const noCors = await unchanged(`no-cors POST ${base}`, () => tryFetch(page, approve, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{}' }));
      expect(noCors).toMatchObject({ status: 0, type: 'opaque', body: '' });
      // The same without a body: the approve route takes none, so only the guard stands between this and an approval.
      const empty = await unchanged(`no-cors POST without a body ${base}`, () => tryFetch(page, approve, { method: 'POST', mode: 'no-cors' }));
      expect(empty).toMatchObject({ status: 0, type: 'opaque', body: '' });

      // A CORS POST with JSON: the preflight gets no permission, so the POST is never sent.
      const cors = await unchanged(`cors POST ${base}`, () => tryFetch(page, approve, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }));
      expect(cors.status, JSON.stringify(cors)).toBeNull();
      const corsHeader = await unchanged(`cors POST with X-Nomos-Client ${base}`, () => tryFetch(page, approve, { method: 'POST', headers: { 'x-nomos-client': 'console' } }));
      expect(corsHeader.status, JSON.stringify(corsHeader)).toBeNull();

      // Forms, in each encoding a form has.
      for (const enctype of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']) {
        const form = await unchanged(`form ${enctype} ${base}`, () => submitForm(page, approve, enctype));
        expect(form.readable, enctype).toBeNull();
        expect(form.status, enctype).toBe(403);
      }
    }
    // What the server answered the POSTs the browser did send (as the browser saw them, not the page): refusals.
    const posts = responses.filter((r) => r.method === 'POST' && r.url.endsWith(`/approvals/${approval}/approve`));
    expect(posts.length).toBeGreaterThanOrEqual(10);
    expect(posts.filter((r) => r.status !== 403)).toEqual([]);
    await page.context().close();
  });

  it('a page under a rebound name on the server’s own port is refused as a foreign host, for reading and approving', async () => {
    const rebound = `http://rebind.test:${port}`;
    const { page, responses } = await unchanged('loading the page', () => open(`${rebound}/`));
    // The console itself is not served under that name.
    expect(responses.find((r) => r.url === `${rebound}/`)?.status).toBe(403);
    const approve = `/approvals/${approval}/approve`;
    // Same origin in the browser's eyes: it lets the page read the answers, which are refusals.
    const read = await unchanged('read', () => tryFetch(page, '/approvals', {}));
    expect(read.status).toBe(403);
    expect(JSON.parse(read.body!)).toMatchObject({ code: 'foreign_host' });
    expect(read.body).not.toContain(approval);
    for (const init of [
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
      { method: 'POST', headers: { 'x-nomos-client': 'console' } },
      { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{}' },
      { method: 'POST', mode: 'no-cors' },
    ]) {
      const res = await unchanged(`approve ${JSON.stringify(init)}`, () => tryFetch(page, approve, init));
      expect(res.status, JSON.stringify(init)).toBe(403);
      expect(JSON.parse(res.body!), JSON.stringify(init)).toMatchObject({ code: 'foreign_host' });
    }
    const form = await unchanged('form', () => submitForm(page, `${rebound}${approve}`, 'application/x-www-form-urlencoded'));
    expect(form.status).toBe(403);
    await page.context().close();
  });

  it('the console’s own origin reads the approval and approves it with the same request', async () => {
    const { page, responses } = await open(`${server.url}/#/approvals`);
    expect(responses.find((r) => r.url === `${server.url}/`)?.status).toBe(200);
    const read = await tryFetch(page, '/approvals?status=pending', {});
    expect(read.status).toBe(200);
    expect(read.body).toContain(approval);
    // The no-cors shape is still refused here: a POST without JSON or the client header is refused from anywhere.
    const bare = await unchanged('text/plain from the own origin', () => tryFetch(page, `/approvals/${approval}/approve`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }));
    expect(bare.status).toBe(415);

    const before = await head();
    const approved = await tryFetch(page, `${server.url}/approvals/${approval}/approve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(approved.status, approved.body).toBe(200);
    expect(JSON.parse(approved.body!)).toMatchObject({ approval_id: approval, status: 'granted', execution: { execution_id: execution } });
    expect(await status()).not.toBe('pending');
    expect(await head()).toBeGreaterThan(before);
    expect(started).toEqual([PENDING_COMMAND]);
    await page.context().close();
  });
});
