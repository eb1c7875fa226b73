// The Commands page in a real browser over a real server that requires tokens: executions of two agents across
// sessions, one approved and one denied by an operator; filters that live in the address and survive a reload,
// rows that link to their session and approval, CSV and JSON exports (fetched with the signed-in token and saved
// through a Blob) holding exactly the filtered rows, and a bad filter answered with the server's words.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { parseTokens } from '../../src/api/auth.ts';
import { parseCsv } from '../support/csv.ts';
import { databases } from '../support/databases.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

const embedded = databases.find((d) => d.name === 'pglite')!;
const ALICE = 'alice-token-0123456789abcdef-0123456';
const BOT = 'bot-token-0123456789abcdef-01234567';
const HELPER = 'helper-token-0123456789abcdef-01234';
const tokens = parseTokens(`operator:alice:${ALICE},agent:bot:${BOT},agent:helper:${HELPER}`);
const as = (token: string) => ({ authorization: `Bearer ${token}` });

/** The executions the table shows, top to bottom. */
const shown = (page: Page) => page.locator('tr[data-execution]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-execution')));

describe('the Commands page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let s1 = '';
  let s2 = '';
  const ids: Record<string, string> = {};
  const approvals: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer(embedded, { tokens, executor: instantExecutor() });
    browser = await launchBrowser();
    const reg = await server.request('POST', '/entities', {
      entities: [
        { slug: 'host:pve1', type: 'host', ssh: { host: '192.0.2.10', port: 22, user: 'root' } },
        { slug: 'lxc:web', type: 'lxc', parent: 'host:pve1', pve_id: 101 },
        { slug: 'host:nas', type: 'host', ssh: { host: '192.0.2.20', port: 22, user: 'admin' } },
      ],
    }, as(ALICE));
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    s1 = (await server.request('POST', '/sessions', undefined, as(BOT))).body.session_id;
    s2 = (await server.request('POST', '/sessions', undefined, as(HELPER))).body.session_id;
    const run = async (name: string, session: string, token: string, target: string, command: string) => {
      const res = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target, command }, as(token));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids[name] = res.body.execution_id;
      if (res.body.approval_id) approvals[name] = res.body.approval_id;
    };
    await run('uptime', s1, BOT, 'host:pve1', 'uptime');
    await run('touch', s1, BOT, 'lxc:web', 'touch /tmp/nomos-web-a');
    await run('denied', s2, HELPER, 'host:nas', 'touch /tmp/nomos-web-b');
    await run('quoted', s2, HELPER, 'host:nas', 'echo "a,b" -x');
    expect((await server.request('POST', `/approvals/${approvals.touch}/approve`, undefined, as(ALICE))).status).toBe(200);
    expect((await server.request('POST', `/approvals/${approvals.denied}/deny`, { reason: 'not now' }, as(ALICE))).status).toBe(200);
    const head = (await server.runtime.store.head()).position;
    await until('the log settled', async () => {
      const res = await server.request('GET', `/executions?status=succeeded&min_position=${head}`, undefined, as(ALICE));
      return res.body.executions?.length === 3 ? true : undefined;
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('lists every command newest first, with links to its session and its approval', async () => {
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/commands`, { token: ALICE });
    await page.locator(`tr[data-execution="${ids.uptime}"]`).waitFor();
    expect(await shown(page)).toEqual([ids.quoted, ids.denied, ids.touch, ids.uptime]);
    const touch = page.locator(`tr[data-execution="${ids.touch}"]`);
    expect(await touch.textContent()).toContain('agent:bot');
    expect(await touch.textContent()).toContain('operator:alice');
    expect(await touch.getByRole('link', { name: 'granted' }).getAttribute('href')).toBe(`/#/sessions/${s1}?focus=approval-${approvals.touch}`);
    expect(await touch.getByRole('link', { name: `session ${s1}` }).getAttribute('href')).toBe(`/#/sessions/${s1}?focus=exec-${ids.touch}`);
    expect(await page.locator(`tr[data-execution="${ids.uptime}"]`).getByRole('link', { name: /granted|denied/ }).count()).toBe(0);
    await screenshot('commands');
    // The approval link opens the session at the approval.
    await touch.getByRole('link', { name: 'granted' }).click();
    await page.waitForURL(new RegExp(`#/sessions/${s1}\\?focus=approval-${approvals.touch}$`));
    await page.locator(`[id="approval-${approvals.touch}"]`).waitFor();
    expect(errors).toEqual([]);
  });

  it('keeps its filters in the address: chosen, typed, reloaded', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/commands`, { token: ALICE });
    await page.locator(`tr[data-execution="${ids.uptime}"]`).waitFor();
    await page.getByLabel('Status').selectOption('denied');
    await page.waitForURL(/#\/commands\?status=denied$/);
    await page.locator(`tr[data-execution="${ids.uptime}"]`).waitFor({ state: 'detached' });
    expect(await shown(page)).toEqual([ids.denied]);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.waitForURL(/#\/commands$/);
    await page.locator(`tr[data-execution="${ids.uptime}"]`).waitFor();

    // A host stands for itself and its guests; a typed value applies when committed.
    await page.getByLabel('Host (and its guests)').fill('host:pve1');
    await page.getByLabel('Host (and its guests)').press('Enter');
    await page.waitForURL(/#\/commands\?host=host%3Apve1$/);
    await page.locator(`tr[data-execution="${ids.quoted}"]`).waitFor({ state: 'detached' });
    expect(await shown(page)).toEqual([ids.touch, ids.uptime]);
    await page.getByLabel('Approved or denied by').fill('operator:alice');
    await page.getByLabel('Approved or denied by').press('Enter');
    await page.waitForURL(/host=host%3Apve1&approver=operator%3Aalice$/);
    await page.locator(`tr[data-execution="${ids.uptime}"]`).waitFor({ state: 'detached' });
    expect(await shown(page)).toEqual([ids.touch]);

    await page.reload();
    await page.locator(`tr[data-execution="${ids.touch}"]`).waitFor();
    expect(await shown(page)).toEqual([ids.touch]);
    expect(await page.getByLabel('Host (and its guests)').inputValue()).toBe('host:pve1');
    expect(await page.getByLabel('Approved or denied by').inputValue()).toBe('operator:alice');
    // Back goes to the filters before.
    await page.goBack();
    await page.waitForURL(/#\/commands\?host=host%3Apve1$/);
    await page.locator(`tr[data-execution="${ids.uptime}"]`).waitFor();
    expect(errors).toEqual([]);
  });

  it('exports exactly the filtered rows as CSV and JSON, with the signed-in token', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/commands?host=host:nas`, { token: ALICE });
    await page.locator(`tr[data-execution="${ids.quoted}"]`).waitFor();
    expect(await shown(page)).toEqual([ids.quoted, ids.denied]);

    const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    expect(csvDownload.suggestedFilename()).toMatch(/^nomos-commands-\d{8}T\d{6}Z\.csv$/);
    const [header, ...records] = parseCsv(await readFile(await csvDownload.path(), 'utf8'));
    const col = (record: string[], name: string) => record[header!.indexOf(name)];
    expect(records.map((r) => col(r, 'id'))).toEqual([ids.quoted, ids.denied]);
    expect(col(records[0]!, 'command')).toBe('echo "a,b" -x');
    expect(col(records[1]!, 'status')).toBe('denied');
    expect(col(records[1]!, 'approver')).toBe('operator:alice');
    expect(col(records[1]!, 'requested_by')).toBe('agent:helper');
    expect(col(records[1]!, 'session_id')).toBe(s2);
    await page.getByRole('status').filter({ hasText: /^Saved nomos-commands-.*\.csv\.$/ }).waitFor();

    const [jsonDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
    expect(jsonDownload.suggestedFilename()).toMatch(/^nomos-commands-\d{8}T\d{6}Z\.json$/);
    const json = JSON.parse(await readFile(await jsonDownload.path(), 'utf8'));
    expect(json.truncated).toBe(false);
    expect(json.executions.map((e: { id: string }) => e.id)).toEqual([ids.quoted, ids.denied]);
    expect(json.executions[1]).toMatchObject({ approval_id: approvals.denied, approval_status: 'denied', links: { approval_page: `/#/sessions/${s2}?focus=approval-${approvals.denied}` } });
    expect(errors).toEqual([]);
  });

  it('shows a refused filter with the server’s words, and exports nothing for it', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/commands`, { token: ALICE });
    await page.locator(`tr[data-execution="${ids.uptime}"]`).waitFor();
    await page.getByLabel('Since').fill('yesterday');
    await page.getByLabel('Since').press('Enter');
    await page.waitForURL(/#\/commands\?since=yesterday$/);
    const alert = page.getByRole('alert').filter({ hasText: 'since' });
    await alert.first().waitFor();
    expect(await alert.first().textContent()).toMatch(/since takes an RFC 3339 time.*validation_failed/);
    expect(await page.locator('tr[data-execution]').count()).toBe(0);
    let downloaded = false;
    page.on('download', () => (downloaded = true));
    await page.getByRole('button', { name: 'Export CSV' }).click();
    await page.getByRole('group', { name: 'Export' }).getByRole('alert').waitFor();
    expect(downloaded).toBe(false);
    // The browser reports each refused request; nothing else may have gone wrong.
    expect(errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
  });
});
