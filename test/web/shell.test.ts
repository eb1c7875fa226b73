// The console's shell in a real browser: served by the server at `/` with nothing from elsewhere, the navigation
// by name, sign-in when auth is on (token kept as a header, never in a URL), and a clean browser console.
// Browser suites run on the embedded default (PGlite), the newcomer's setup; the API suites cover PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { databases } from '../support/databases.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const embedded = databases.find((d) => d.name === 'pglite')!;

describe('the console shell (auth off)', () => {
  let server: TestServer;
  let browser: TestBrowser;
  beforeAll(async () => {
    server = await startTestServer(embedded);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('serves the page at / with its assets from this server only, no sign-in, every area in the navigation', async () => {
    const index = await fetch(`${server.url}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/text\/html/);
    expect(index.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    const html = await index.text();
    expect(html).not.toMatch(/https?:\/\//);

    const { page, errors, screenshot } = await browser.open(`${server.url}/`);
    const nav = page.getByRole('navigation', { name: 'Main' });
    // The shell draws its navigation once it knows whether a sign-in is needed (GET /me): counted before, it has none.
    await nav.waitFor();
    for (const name of ['Sessions', 'Chat', 'Approvals', 'Commands', 'Fleet', 'Audit', 'Log', 'System']) expect(await nav.getByRole('link', { name, exact: true }).count()).toBe(1);
    await nav.getByRole('link', { name: 'System' }).click();
    await page.waitForURL(/#\/system$/);
    await page.getByRole('status', { name: /live updates on/ }).waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    await screenshot('shell');
    expect(errors).toEqual([]);
  });

  it('is usable by keyboard: a skip link first, then the navigation, each page reached with Tab and Enter', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/sessions`);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    const focused = () => page.evaluate('document.activeElement ? (document.activeElement.id || document.activeElement.textContent || "").trim() : ""');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await focused()).toBe('main');
    // From the top again: Tab until the Approvals link has the focus, then Enter opens it.
    await page.evaluate('document.activeElement && document.activeElement.blur()');
    let steps = 0;
    while (!/^Approvals/.test(String(await focused())) && steps < 20) {
      await page.keyboard.press('Tab');
      steps++;
    }
    expect(steps).toBeLessThan(20);
    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/approvals$/);
    await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    expect(errors).toEqual([]);
  });

  it('keeps the API answering JSON and unknown paths problem+json beside the console', async () => {
    expect((await server.request('GET', '/sessions')).status).toBe(200);
    const missing = await server.request('GET', '/no-such-thing');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('no_such_route');
  });
});

describe('the console shell (auth on)', () => {
  const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,auditor:audit:audit-secret-1-long-enough-for-32-chars');
  let server: TestServer;
  let browser: TestBrowser;
  beforeAll(async () => {
    server = await startTestServer(embedded, { tokens });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('loads without a token, asks for one, refuses a wrong one by name, and signs in with a right one', async () => {
    expect((await fetch(`${server.url}/`)).status).toBe(200);
    expect((await fetch(`${server.url}/sessions`)).status).toBe(401);

    const { page, errors, screenshot } = await browser.open(`${server.url}/`);
    const token = page.getByLabel('API token');
    await token.fill('wrong-token-123');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'not one this server knows' }).waitFor();
    await screenshot('sign-in');

    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await token.fill('op-secret-1-long-enough-for-32-chars');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    expect(await page.getByText('operator:alice').count()).toBe(1);
    expect(requests.some((u) => u.includes('op-secret-1-long-enough-for-32-chars'))).toBe(false);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    // The refused token's 401 is the only console error: Chromium logs every failed resource load.
    expect(errors.filter((e) => !/401/.test(e))).toEqual([]);
  });
});
