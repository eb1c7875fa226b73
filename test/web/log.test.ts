// The Log page in a real browser over a real server that requires tokens and seals its log: the latest checkpoint
// with its note byte for byte as GET /log/checkpoint serves it (and copied as such), the public key shown and saved,
// the seal's lag in words (unsealed, behind, caught up), the checkpoint history a page at a time, all of it
// following the log live; and the Receipt buttons on a decided approval and an execution: the file saved under
// its name, or the server's words when it has none to give; a secret redacted from an event on the session page.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { parseTokens } from '../../src/api/auth.ts';
import { generateSigningKey } from '../../src/log/keys.ts';
import { STALLED_MS, findingLines, findingText, keyFileName, recheckMs, sealWords, stalledMs, waiting } from '../../web/src/components/log/log.ts';
import type { LogStatus } from '../../web/src/lib/types.ts';
import { databases } from '../support/databases.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

const ALICE = 'alice-token-0123456789abcdef-0123456';
const BOT = 'bot-token-0123456789abcdef-01234567';
const tokens = parseTokens(`operator:alice:${ALICE},agent:bot:${BOT}`);
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const FLEET = [
  { slug: 'host:pve1', type: 'host', ssh: { host: '192.0.2.10', port: 22, user: 'root' } },
  { slug: 'lxc:web', type: 'lxc', parent: 'host:pve1', pve_id: 101 },
];

/** The log's state once everything committed is sealed and the latest checkpoint covers it. */
async function settled(server: TestServer): Promise<LogStatus> {
  return until('everything sealed and checkpointed', async () => {
    const log = (await server.request('GET', '/log', undefined, as(ALICE))).body as LogStatus;
    return log.lag_events === 0 && log.checkpoint?.tree_size === log.tree_size && log.tree_size > 0 ? log : undefined;
  });
}

/** A command that waits for an approval, approved by Alice: the approval's and the execution's ids once it ran. */
async function approvedCommand(server: TestServer): Promise<{ approval: string; execution: string }> {
  expect((await server.request('POST', '/entities', { entities: FLEET }, as(ALICE))).status).toBe(200);
  const session = (await server.request('POST', '/sessions', undefined, as(BOT))).body.session_id as string;
  const run = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target: 'lxc:web', command: 'touch /tmp/nomos-log-receipt' }, as(BOT));
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  const ids = { approval: run.body.approval_id as string, execution: run.body.execution_id as string };
  expect(ids.approval).toBeTruthy();
  expect((await server.request('POST', `/approvals/${ids.approval}/approve`, undefined, as(ALICE))).status).toBe(200);
  await until('the approved command ran', async () => {
    const res = await server.request('GET', `/executions/${ids.execution}`, undefined, as(ALICE));
    return res.body.status === 'succeeded' ? true : undefined;
  });
  return ids;
}

const treeSizes = (page: Page) => page.locator('tr[data-tree-size]').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-tree-size'))));
const digits = (text: string | null) => Number((text ?? '').replace(/\D/g, ''));
/** Older checkpoints until the oldest is shown; then there are none to ask for. */
async function olderAll(page: Page, oldest: number): Promise<void> {
  await page.getByRole('button', { name: 'Older checkpoints' }).click();
  await page.locator(`tr[data-tree-size="${oldest}"]`).waitFor();
  expect(await page.getByRole('button', { name: /Older checkpoints|Loading/ }).count()).toBe(0);
}
/** The browser reports every refused request as a console error; the tests that ask for one allow exactly those. */
const besides = (errors: string[], status: number) => errors.filter((e) => !e.includes(`status of ${status}`));

describe('the Log page’s words', () => {
  const status = (s: Partial<LogStatus>): LogStatus => ({ sealed: true, origin: 'nomos/0123456789abcdef', tree_size: 12, last_position: 12, head_position: 12, lag_events: 0, sealed_at: '2026-01-01T00:00:00.000Z', checkpoint: { tree_size: 12, root: 'r', signed_at: '2026-01-01T00:00:00.000Z', note: 'n' }, ...s });

  it('says how far the seal is behind, and when to look again', () => {
    expect(sealWords(status({}))).toBe('All 12 events sealed.');
    expect(sealWords(status({ tree_size: 1 }))).toBe('The 1 event is sealed.');
    expect(sealWords(status({ lag_events: 3 }))).toBe('3 events waiting to be sealed, the sealer seals every second.');
    expect(sealWords(status({ lag_events: 1 }))).toBe('1 event waiting to be sealed, the sealer seals every second.');
    expect(sealWords(status({ sealed: false, lag_events: 4, tree_size: 0, checkpoint: null }))).toMatch(/^4 events waiting to be sealed, but no server has sealed this log yet/);
    expect(recheckMs(status({}))).toBeNull();
    expect(recheckMs(status({ lag_events: 2 }))).toBe(1_000);
    expect(recheckMs(status({ tree_size: 13 }))).toBe(5_000);
    expect(recheckMs(status({ sealed: false, lag_events: 2, checkpoint: null }))).toBeNull();
  });

  it('counts a stall from when the page first saw events wait at a position, not from the last seal', () => {
    // Sealed an hour ago, then quiet: the event that just came is not a stall.
    const quiet = status({ lag_events: 1, sealed_at: '2026-01-01T00:00:00.000Z' });
    const t = Date.parse('2026-01-01T01:00:00.000Z');
    const first = waiting(null, quiet, t);
    expect(first).toEqual({ position: 12, since: t });
    expect(stalledMs(first, t)).toBeNull();
    expect(waiting(first, quiet, t + 5_000)).toBe(first);
    expect(stalledMs(first, t + STALLED_MS + 1)).toBe(STALLED_MS + 1);
    // The seal moved: counted again from there; caught up: nothing waits.
    expect(waiting(first, status({ lag_events: 1, last_position: 13 }), t + 20_000)).toEqual({ position: 13, since: t + 20_000 });
    expect(waiting(first, status({}), t + 20_000)).toBeNull();
  });

  it('names the key’s file after the origin, and reads findings of any shape', () => {
    expect(keyFileName('nomos/0123456789abcdef')).toBe('nomos-0123456789abcdef.pub.pem');
    expect(keyFileName(null)).toBe('nomos-log.pub.pem');
    expect(findingText('root mismatch at 12')).toBe('root mismatch at 12');
    expect(findingText({ kind: 'bad_checkpoint', tree_size: 12, reason: 'not signed by the key' })).toBe('bad_checkpoint — not signed by the key');
    expect(findingText({ kind: 'edited', position: 12, leaf_index: 11, stream: 'session-a', type: 'GoalSet' })).toBe('edited — position 12, leaf_index 11, stream session-a, type GoalSet');
    expect(findingText({ tree_size: 12 })).toBe('{"tree_size":12}');
    // The record `nomos verify` keeps, a list, or nothing.
    const kept = { chain: [{ kind: 'deleted', position: 4, leaf_index: 3 }], more: 2, read_models: [{ projection: 'sessions', skipped: null, differences: [{}, {}] }, { projection: 'plans', skipped: 'version 3 rows' }] };
    expect(findingLines(kept)).toEqual(['deleted — position 4, leaf_index 3', '… and 2 more', 'read model sessions differs from its rebuild from the events (2 differences kept)', 'read model plans: not compared: version 3 rows']);
    expect(findingLines(['one', { kind: 'tree_broken', detail: 'node 3 missing' }])).toEqual(['one', 'tree_broken — node 3 missing']);
    expect(findingLines(null)).toEqual([]);
    expect(findingLines({ chain: [], more: 0, read_models: [], extra: 1 })).toEqual(['{"extra":1}']);
  });
});

describe.each(databases)('the Log page on $name', (database) => {
  let server: TestServer;
  let browser: TestBrowser;
  let ids: { approval: string; execution: string };

  beforeAll(async () => {
    server = await startTestServer(database, { tokens, executor: instantExecutor() });
    browser = await launchBrowser();
    ids = await approvedCommand(server);
    await server.runtime.startSealer({ key: generateSigningKey(), sealMs: 20, checkpointEvery: { events: 1, ms: null } });
    await settled(server);
    // More checkpoints than the history's first page holds: one per session, each sealed before the next.
    for (let i = 0; i < 22; i++) {
      expect((await server.request('POST', '/sessions', undefined, as(BOT))).status).toBe(201);
      await settled(server);
    }
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the latest checkpoint as signed, the key, the seal and every checkpoint', async () => {
    const log = await settled(server);
    const note = await server.request('GET', '/log/checkpoint', undefined, as(ALICE));
    const pem = await server.request('GET', '/log/public-key', undefined, as(ALICE));
    const all = (await server.request('GET', '/log/checkpoints?limit=1000', undefined, as(ALICE))).body.checkpoints as { tree_size: number }[];
    expect(all.length).toBeGreaterThan(20);

    const { page, context, errors, screenshot } = await browser.open(`${server.url}/#/log`, { token: ALICE });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const shownNote = page.getByRole('region', { name: 'Latest checkpoint' }).locator('pre');
    await shownNote.waitFor();
    expect(await shownNote.textContent()).toBe(note.body);
    const figure = (field: string) => page.locator(`dl[aria-label="latest checkpoint"] [data-field="${field}"] dd`);
    expect(digits(await figure('tree_size').textContent())).toBe(log.tree_size);
    expect(await figure('root').textContent()).toBe(log.checkpoint!.root);
    expect(await figure('origin').textContent()).toBe(log.origin);
    expect(await page.getByRole('status', { name: 'seal lag' }).textContent()).toBe(`All ${log.tree_size} events sealed.`);
    // The server records no `nomos verify` run yet (or has no such field): the page says so.
    expect(await page.getByRole('status', { name: 'verification' }).textContent()).toContain('never verified');
    expect(await page.locator('main').textContent()).toContain('docs/verifiable-log.md');

    const key = page.getByLabel('public key (PEM)');
    await key.waitFor();
    await page.locator('tr[data-tree-size]').first().waitFor();
    await screenshot('log');

    // The key, shown and saved as served.
    expect(await key.textContent()).toBe(pem.body);
    const [saved] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: /Download the public key/ }).click()]);
    expect(saved.suggestedFilename()).toBe(keyFileName(log.origin));
    expect(await readFile(await saved.path(), 'utf8')).toBe(pem.body);

    // The note, copied exactly.
    await page.getByRole('button', { name: 'Copy note' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(note.body);

    // The history: the newest page, then the older ones, until there are none.
    expect(await treeSizes(page)).toEqual(all.slice(0, 20).map((c) => c.tree_size));
    await olderAll(page, all.at(-1)!.tree_size);
    expect(await treeSizes(page)).toEqual(all.map((c) => c.tree_size));
    expect(errors).toEqual([]);
  });

  it('follows the log live: a new event is sealed, signed and shown without a reload', async () => {
    const before = await settled(server);
    const { page, errors } = await browser.open(`${server.url}/#/log`, { token: ALICE });
    const size = page.locator('dl[aria-label="latest checkpoint"] [data-field="tree_size"] dd');
    await size.waitFor();
    expect(digits(await size.textContent())).toBe(before.tree_size);
    const first = (await server.request('GET', '/log/checkpoints?limit=1000', undefined, as(ALICE))).body.checkpoints as { tree_size: number }[];
    await olderAll(page, first.at(-1)!.tree_size);
    expect(await treeSizes(page)).toEqual(first.map((c) => c.tree_size));

    expect((await server.request('POST', '/sessions', undefined, as(BOT))).status).toBe(201);
    const after = await settled(server);
    expect(after.tree_size).toBeGreaterThan(before.tree_size);
    await until('the page shows the new checkpoint', async () => (digits(await size.textContent()) === after.tree_size ? true : undefined));
    const note = await server.request('GET', '/log/checkpoint', undefined, as(ALICE));
    expect(await page.getByRole('region', { name: 'Latest checkpoint' }).locator('pre').textContent()).toBe(note.body);
    await until('the seal caught up in words', async () => ((await page.getByRole('status', { name: 'seal lag' }).textContent()) === `All ${after.tree_size} events sealed.` ? true : undefined));
    // The new checkpoints on top of every one shown before, the older pages kept.
    const all = (await server.request('GET', '/log/checkpoints?limit=1000', undefined, as(ALICE))).body.checkpoints as { tree_size: number }[];
    await until('the history gained the new checkpoints', async () => ((await treeSizes(page)).length === all.length ? true : undefined));
    expect(await treeSizes(page)).toEqual(all.map((c) => c.tree_size));
    expect(all.length).toBeGreaterThan(first.length);
    expect(errors).toEqual([]);
  });

  it('redacts a secret from an event on the session page (operators only), which then shows the redacted payload', async () => {
    const secret = 'hunter2-correct-horse-battery';
    const session = (await server.request('POST', '/sessions', undefined, as(ALICE))).body.session_id as string;
    const posted = await server.request('POST', `/sessions/${session}/commands`, { type: 'post_user_message', text: `the vault password is ${secret}, use it` }, as(ALICE));
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);
    const events = (await server.request('GET', `/sessions/${session}/events`, undefined, as(ALICE))).body.events as Array<{ type: string; position: number }>;
    const position = events.find((e) => e.type === 'UserMessagePosted')!.position;

    // The agent sees the data, and no way to redact it.
    const agentView = await browser.open(`${server.url}/#/sessions/${session}`, { token: BOT });
    await agentView.page.getByText('Events (').click();
    await agentView.page.locator(`tr#event-${position} summary`).filter({ hasText: 'data' }).click();
    expect(await agentView.page.getByLabel(`data of event ${position}`).textContent()).toContain(secret);
    expect(await agentView.page.getByRole('button', { name: `Redact from event ${position}` }).count()).toBe(0);

    const { page, errors } = await browser.open(`${server.url}/#/sessions/${session}`, { token: ALICE });
    await page.getByText('Events (').click();
    const row = page.locator(`tr#event-${position}`);
    await row.locator('summary').filter({ hasText: 'data' }).click();
    await row.getByRole('button', { name: `Redact from event ${position}` }).click();
    const form = page.getByRole('form', { name: `redact from event ${position}` });
    // The server's refusal, in its words: a text that is not in the payload changes nothing.
    await form.getByLabel('Text to redact').fill('not-in-this-event');
    await form.getByLabel('Reason').fill('a password pasted into the chat');
    await form.getByRole('button', { name: 'Redact' }).click();
    await form.getByRole('alert').waitFor();
    expect((await server.request('GET', `/sessions/${session}/events`, undefined, as(ALICE))).body.events).toHaveLength(events.length);
    await form.getByLabel('Text to redact').fill(secret);
    await form.getByRole('button', { name: 'Redact' }).click();
    await row.getByRole('status').filter({ hasText: /^Redacted 1 occurrence in the event and \d+ read-model rows?; recorded at position \d+\.$/ }).waitFor();
    await until('the page shows the redacted payload', async () => ((await row.getByLabel(`data of event ${position}`).textContent())?.includes('[REDACTED]') ? true : undefined));
    expect(await row.getByLabel(`data of event ${position}`).textContent()).not.toContain(secret);
    expect(await page.locator('main').textContent()).not.toContain(secret);
    // The redaction is on the record: who and why, never the secret; and the sealed leaf still proves the event.
    const raw = (await server.request('GET', `/sessions/${session}/events`, undefined, as(ALICE))).body.events as Array<{ type: string; position: number; data: unknown }>;
    expect(JSON.stringify(raw)).not.toContain(secret);
    await settled(server);
    const proof = await server.request('GET', `/log/proof/inclusion?position=${position}&tree_size=${(await settled(server)).tree_size}`, undefined, as(ALICE));
    expect(proof.status).toBe(200);
    expect(besides(errors, 409)).toEqual([]);
  });

  it('is in the navigation, and the tab says where one is', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/sessions`, { token: ALICE });
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Log', exact: true }).click();
    await page.waitForURL(/#\/log$/);
    await page.getByRole('heading', { name: 'Log', level: 1 }).waitFor();
    expect(await nav.getByRole('link', { name: 'Log', exact: true }).getAttribute('aria-current')).toBe('page');
    expect(await page.title()).toBe('Log · Nomos');
    expect(errors).toEqual([]);
  });

  it('saves a decided approval’s and an execution’s receipt as files, by keyboard too', async (ctx) => {
    const probe = await server.request('GET', `/approvals/${ids.approval}/receipt`, undefined, as(ALICE));
    if (probe.body?.code === 'no_such_route') ctx.skip('GET /approvals/:id/receipt is not on this server yet (404 no_such_route): the download is not tested');
    expect(probe.status, JSON.stringify(probe.body)).toBe(200);
    const served = {
      approval: await (await fetch(`${server.url}/approvals/${ids.approval}/receipt`, { headers: as(ALICE) })).text(),
      execution: await (await fetch(`${server.url}/executions/${ids.execution}/receipt`, { headers: as(ALICE) })).text(),
    };

    const { page, errors } = await browser.open(`${server.url}/#/approvals`, { token: ALICE });
    const decided = page.getByRole('table', { name: 'recently decided approvals' }).locator(`tr[data-approval-id="${ids.approval}"]`);
    await decided.waitFor();
    const button = decided.getByRole('button', { name: 'Receipt' });
    await button.focus();
    const [approvalFile] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
    expect(approvalFile.suggestedFilename()).toBe(`nomos-receipt-approval-${ids.approval}.json`);
    const approvalText = await readFile(await approvalFile.path(), 'utf8');
    expect(approvalText).toBe(served.approval);
    expect(JSON.parse(approvalText)).toMatchObject({ format: 'nomos-receipt/1', kind: 'approval', id: ids.approval });
    await decided.getByRole('status').filter({ hasText: `Saved nomos-receipt-approval-${ids.approval}.json.` }).waitFor();

    await page.goto(`${server.url}/#/commands`);
    const row = page.locator(`tr[data-execution="${ids.execution}"]`);
    await row.waitFor();
    const [executionFile] = await Promise.all([page.waitForEvent('download'), row.getByRole('button', { name: 'Receipt' }).click()]);
    expect(executionFile.suggestedFilename()).toBe(`nomos-receipt-execution-${ids.execution}.json`);
    const executionText = await readFile(await executionFile.path(), 'utf8');
    expect(executionText).toBe(served.execution);
    expect(JSON.parse(executionText)).toMatchObject({ format: 'nomos-receipt/1', kind: 'execution', id: ids.execution });
    expect(errors).toEqual([]);
  });

  it('says the server’s words when it gives no receipt, and saves nothing', async (ctx) => {
    const probe = await server.request('GET', `/executions/${ids.execution}/receipt`, undefined, as(ALICE));
    const missing = probe.body?.code === 'no_such_route';
    const { page, errors } = await browser.open(`${server.url}/#/commands`, { token: ALICE });
    let downloaded = false;
    page.on('download', () => (downloaded = true));
    const row = page.locator(`tr[data-execution="${ids.execution}"]`);
    await row.waitFor();
    // A door the server lacks, or (once it has the doors) an id it does not know: a 404 with its detail.
    const unknown = '00000000-0000-4000-8000-000000000000';
    const target = missing ? ids.execution : unknown;
    if (!missing) await page.route(`**/executions/${ids.execution}/receipt`, (route) => route.continue({ url: `${server.url}/executions/${unknown}/receipt` }));
    await row.getByRole('button', { name: 'Receipt' }).click();
    const alert = row.getByRole('alert');
    await alert.waitFor();
    const expected = (await server.request('GET', `/executions/${target}/receipt`, undefined, as(ALICE))).body as { code: string; detail: string };
    expect(expected.code).toBeTruthy();
    expect(await alert.textContent()).toBe(`${expected.detail} (${expected.code})`);
    expect(downloaded).toBe(false);
    expect(besides(errors, 404)).toEqual([]);
    if (missing) await ctx.annotate('GET /executions/:id/receipt is not on this server yet: the 404 no_such_route detail was shown');
  });

  it('says how long until a checkpoint covers it, from Retry-After (the 503 as the server documents it)', async () => {
    // Answered by the browser's router, so that the wording is checked whatever the server's state; the real
    // 503 is asked for below, on a server whose sealer waits.
    const { page, errors } = await browser.open(`${server.url}/#/commands`, { token: ALICE });
    const problem = (retryAfter: string) => ({ status: 503, headers: { 'content-type': 'application/problem+json', 'retry-after': retryAfter }, body: JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, code: 'receipt_not_ready', detail: 'not covered by a checkpoint yet' }) });
    let answer = problem('7');
    await page.route('**/executions/*/receipt', (route) => route.fulfill(answer));
    let downloaded = false;
    page.on('download', () => (downloaded = true));
    const row = page.locator(`tr[data-execution="${ids.execution}"]`);
    await row.waitFor();
    await row.getByRole('button', { name: 'Receipt' }).click();
    await row.getByRole('status').filter({ hasText: 'not sealed into a checkpoint yet — try again in 7 s' }).waitFor();
    answer = problem(new Date(Date.now() + 30_000).toUTCString());
    await row.getByRole('button', { name: 'Receipt' }).click();
    await row.getByRole('status').filter({ hasText: /^not sealed into a checkpoint yet — try again in (29|30) s$/ }).waitFor();
    expect(downloaded).toBe(false);
    expect(besides(errors, 503)).toEqual([]);
  });

  it('shows the last `nomos verify` run the server recorded, and what it found', async (ctx) => {
    const before = (await server.request('GET', '/log', undefined, as(ALICE))).body as LogStatus;
    if (!('verification' in before)) ctx.skip('GET /log has no verification field on this server yet: only "never verified" is tested');
    // Written as `nomos verify` writes its record (src/cli/verify.ts): a run that passed, then one that did not.
    const record = (ok: boolean, exitCode: number, summary: string, findings: unknown) =>
      server.runtime.db.query('INSERT INTO log_verifications (ok, exit_code, summary, findings) VALUES ($1, $2, $3, $4)', [ok, exitCode, summary, JSON.stringify(findings)]);
    await record(true, 0, 'verified', { chain: [], more: 0, read_models: [] });
    await record(false, 2, 'NOT VERIFIED: the log was changed after it was sealed', { chain: [{ kind: 'edited', position: 3, leaf_index: 2, stream: 'session-x', type: 'GoalSet' }], more: 0, read_models: [] });
    const last = (await server.request('GET', '/log', undefined, as(ALICE))).body.verification as NonNullable<LogStatus['verification']>;
    expect(last).toMatchObject({ ok: false, exit_code: 2 });

    const { page, errors } = await browser.open(`${server.url}/#/log`, { token: ALICE });
    const section = page.getByRole('region', { name: 'Last verification' });
    const status = section.getByRole('status', { name: 'verification' });
    await status.waitFor();
    expect(await status.textContent()).toMatch(/verification failed.*exit code 2/);
    expect(await section.textContent()).toContain('NOT VERIFIED: the log was changed after it was sealed');
    expect(await section.getByRole('list', { name: 'findings' }).getByRole('listitem').allTextContents()).toEqual(findingLines(last.findings));
    // jsonb keeps the fields in an order of its own: each is there, after the kind.
    const [line] = findingLines(last.findings);
    expect(line).toMatch(/^edited — /);
    for (const field of ['position 3', 'leaf_index 2', 'stream session-x', 'type GoalSet']) expect(line).toContain(field);
    expect(errors).toEqual([]);
  });

  describe('on a log that is not sealed yet, then sealed and behind', () => {
    let slow: TestServer;
    beforeAll(async () => {
      slow = await startTestServer(database, { tokens, executor: instantExecutor() });
    });
    afterAll(async () => slow?.close());

    it('says nothing is sealed, then how many events wait, and a receipt not yet covered waits too', async (ctx) => {
      expect((await slow.request('POST', '/sessions', undefined, as(BOT))).status).toBe(201);
      const unsealed = (await slow.request('GET', '/log', undefined, as(ALICE))).body as LogStatus;
      expect(unsealed.sealed).toBe(false);
      const { page, errors } = await browser.open(`${slow.url}/#/log`, { token: ALICE });
      const lag = page.getByRole('status', { name: 'seal lag' });
      await lag.waitFor();
      expect(await lag.textContent()).toBe(sealWords(unsealed));
      expect(await page.getByRole('region', { name: 'Latest checkpoint' }).textContent()).toContain('No checkpoint yet');
      expect(await page.getByRole('region', { name: 'Public key' }).textContent()).toContain('None yet');
      expect(await page.getByRole('region', { name: 'Checkpoint history' }).textContent()).toContain('No checkpoint has been signed yet.');

      // Sealed once, then a sealer that waits a long time: what is committed next waits to be sealed.
      await slow.runtime.startSealer({ key: generateSigningKey(), sealMs: 600_000, checkpointEvery: { events: 1, ms: null } });
      await settled(slow);
      const waiting = await approvedCommand(slow);
      const behind = (await slow.request('GET', '/log', undefined, as(ALICE))).body as LogStatus;
      expect(behind.lag_events).toBeGreaterThan(0);
      await until('the page says how many events wait', async () => ((await lag.textContent()) === `${behind.lag_events} events waiting to be sealed, the sealer seals every second.` ? true : undefined));
      await page.getByLabel('public key (PEM)').waitFor();
      expect(digits(await page.locator('dl[aria-label="latest checkpoint"] [data-field="tree_size"] dd').textContent())).toBe(behind.tree_size);
      expect(errors).toEqual([]);

      const probe = await slow.request('GET', `/approvals/${waiting.approval}/receipt`, undefined, as(ALICE));
      if (probe.body?.code === 'no_such_route') ctx.skip('GET /approvals/:id/receipt is not on this server yet (404 no_such_route): the real 503 is not tested');
      expect(probe.status).toBe(503);
      expect(probe.body.code).toBe('receipt_not_ready');
      const seconds = Number(probe.headers.get('retry-after'));
      const approvals = await browser.open(`${slow.url}/#/approvals`, { token: ALICE });
      const decided = approvals.page.getByRole('table', { name: 'recently decided approvals' }).locator(`tr[data-approval-id="${waiting.approval}"]`);
      await decided.getByRole('button', { name: 'Receipt' }).click();
      await decided.getByRole('status').waitFor();
      const said = await decided.getByRole('status').textContent();
      expect(said).toMatch(/^not sealed into a checkpoint yet — try again in \d+ s$/);
      // The server counts down to its next checkpoint: asked a moment later, the page's wait is no longer.
      expect(digits(said)).toBeGreaterThanOrEqual(1);
      expect(digits(said)).toBeLessThanOrEqual(seconds);
      expect(besides(approvals.errors, 503)).toEqual([]);
    });
  });
});
