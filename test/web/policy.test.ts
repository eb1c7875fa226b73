// The Policy page in a real browser over a real server with a history of approved and denied commands: the rules in
// force with their justifications and examples, every version with who, when and what it changed, a draft's what-if
// (counts, the once-denied command flagged first) and an invalid draft's problems beside it, a suggestion adopted, a
// draft applied (and a stale page told that another change came first), a draft run in shadow with its divergence and
// promoted; each execution and approval naming the rule that decided it; an auditor reading all of it with no
// write button.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { parseTokens } from '../../src/api/auth.ts';
import { databases } from '../support/databases.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const embedded = databases.find((d) => d.name === 'pglite')!;
const OP = 'op-secret-policy-long-enough-for-32-chars';
const AGENT = 'agent-secret-policy-long-enough-for-32-chars';
const AUDIT = 'audit-secret-policy-long-enough-for-32-chars';
const tokens = parseTokens(`operator:alice:${OP},agent:nomos:${AGENT},auditor:carol:${AUDIT}`);
const as = (token: string, more: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...more });
/** Chromium logs every response with an error status as a failed resource load; only those a test provokes may appear. */
const provoked = (errors: string[], ...statuses: number[]) => errors.filter((e) => !statuses.some((s) => e.includes(`status of ${s}`)));

const NO_REBOOT = { id: 'no-reboot', match: [['reboot', 'poweroff']], decision: 'deny', justification: 'reboots go through the change window', examples: { match: ['sudo reboot'], not_match: ['rebooted'] } };
const CRON = { id: 'cron-ask', match: ['systemctl', 'restart', 'cron'], decision: 'ask', justification: 'cron restarts are looked at' };
const JOURNAL = { id: 'journal-read', match: ['journalctl'], targets: ['lxc:*'], decision: 'allow', justification: 'reading the journal is harmless', examples: { match: ['journalctl -u rclone-backup'] } };
/** Would let the nginx restart run at once, which an operator once denied: what-if must flag it. */
const RESTARTS = {
  id: 'restart-services',
  match: ['systemctl', 'restart', ['rclone-backup', 'nginx']],
  targets: ['lxc:*'],
  decision: 'allow',
  justification: 'restarting these units is routine',
  examples: { match: ['systemctl restart nginx'], not_match: ['systemctl stop nginx'] },
};
const NO_UPTIME = { id: 'no-uptime', match: ['uptime'], decision: 'deny', justification: 'a candidate that refuses uptime, to diverge in shadow' };

describe('the Policy page', { timeout: 60_000 }, () => {
  let server: TestServer;
  let browser: TestBrowser;
  const sessions: string[] = [];

  const policy = async () => (await server.request('GET', '/policy', undefined, as(OP))).body as { version: number; rules: Array<{ id: string }> };
  const run = async (session: string, command: string) => {
    const res = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target: 'lxc:rclone', command }, as(AGENT));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { status: string; approval_id?: string; execution_id: string };
  };
  /** The draft's section: the draft, its buttons, its problems and its what-if. */
  const drafting = (page: Page) => page.getByRole('region', { name: 'Draft and what-if' });
  /** The page's draft replaced by a document. */
  const draft = async (page: Page, document: unknown) => drafting(page).getByLabel(/Draft policy/).fill(typeof document === 'string' ? document : JSON.stringify(document, null, 2));

  beforeAll(async () => {
    server = await startTestServer(embedded, { tokens, executor: instantExecutor() });
    const reg = await server.request('POST', '/entities', { entities: [
      { slug: 'host:peer', type: 'host', ssh: { host: '127.0.0.1', port: 22, user: 'root' } },
      { slug: 'lxc:rclone', type: 'lxc', parent: 'host:peer', pve_id: 132 },
    ] }, as(OP));
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    // A history: the backup restart approved again and again over three sessions, an nginx restart denied once.
    for (let i = 0; i < 3; i++) {
      const session = (await server.request('POST', '/sessions', undefined, as(AGENT))).body.session_id as string;
      sessions.push(session);
      expect((await server.request('POST', `/sessions/${session}/commands`, { type: 'set_goal', goal: `Keep the backup running ${i}` }, as(AGENT))).status).toBe(200);
      for (let j = 0; j < 2; j++) {
        const asked = await run(session, 'systemctl restart rclone-backup');
        expect(asked.status).toBe('approval_required');
        expect((await server.request('POST', `/approvals/${asked.approval_id}/approve`, {}, as(OP))).status).toBe(200);
      }
    }
    const nginx = await run(sessions[0]!, 'systemctl restart nginx');
    expect(nginx.status).toBe('approval_required');
    expect((await server.request('POST', `/approvals/${nginx.approval_id}/deny`, { reason: 'nginx serves the family photos' }, as(OP))).status).toBe(200);
    // Two versions: the second adds a rule, removes one and rewords another.
    expect((await server.request('PUT', '/policy', { rules: [NO_REBOOT, CRON] }, as(OP, { 'if-match': '"0"' }))).status).toBe(200);
    const second = await server.request('PUT', '/policy', { rules: [{ ...NO_REBOOT, justification: 'reboots wait for the Sunday window' }, JOURNAL] }, as(OP, { 'if-match': '"1"' }));
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    browser = await launchBrowser();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the rules in force with their justifications and examples, and every version with who, when and what changed', async () => {
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/policy`, { token: OP });
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link', { name: 'Policy' }).getAttribute('aria-current')).toBe('page');
    await page.getByText('version 2', { exact: true }).first().waitFor();
    expect(await page.locator('[data-field="version"]').textContent()).toMatch(/version 2, applied by operator:alice/);

    const reboot = page.getByRole('article', { name: 'rule no-reboot' });
    expect(await reboot.locator('[data-field="match"]').textContent()).toBe('reboot|poweroff');
    expect(await reboot.locator('[data-field="decision"]').textContent()).toBe('deny');
    expect(await reboot.locator('[data-field="justification"]').textContent()).toBe('reboots wait for the Sunday window');
    expect(await reboot.locator('[data-field="examples"]').textContent()).toMatch(/matches\s*sudo reboot\s*does not match\s*rebooted/);
    const journal = page.getByRole('article', { name: 'rule journal-read' });
    expect(await journal.locator('[data-field="targets"]').textContent()).toBe('lxc:*');
    expect(await page.getByRole('article', { name: 'rule cron-ask' }).count()).toBe(0);

    const history = page.getByRole('list', { name: 'policy versions' });
    const items = history.locator(':scope > li');
    expect(await items.evaluateAll((li) => li.map((l) => l.getAttribute('data-version')))).toEqual(['2', '1']);
    const v2 = history.locator('li[data-version="2"]');
    expect(await v2.textContent()).toMatch(/by operator:alice/);
    expect(await v2.locator('[data-change="added"]').textContent()).toMatch(/journal-read/);
    expect(await v2.locator('[data-change="removed"]').textContent()).toMatch(/cron-ask/);
    expect(await v2.locator('[data-change="changed"]').textContent()).toMatch(/no-reboot: justification\s*$/);
    expect(await history.locator('li[data-version="1"] [data-change="added"]').allTextContents()).toEqual([
      expect.stringMatching(/no-reboot/),
      expect.stringMatching(/cron-ask/),
    ]);
    await screenshot('policy');
    expect(errors).toEqual([]);
  });

  it('replays a draft over every past command: counts, the once-denied command flagged first; an invalid draft shows its problems beside it', async () => {
    const current = await policy();
    const document = { rules: [...current.rules, RESTARTS] };
    const expected = (await server.request('POST', '/policy/what-if', { policy: document }, as(OP))).body;
    expect(expected.changes.newly_allowed, JSON.stringify(expected)).toBeGreaterThanOrEqual(7);
    expect(expected.flags.allowed_once_denied.map((s: { command: string }) => s.command)).toContain('systemctl restart nginx');

    const { page, errors, screenshot } = await browser.open(`${server.url}/#/policy`, { token: OP });
    await page.getByRole('article', { name: 'rule no-reboot' }).waitFor();
    await draft(page, document);
    await page.getByRole('button', { name: 'What if' }).click();
    const result = drafting(page).getByLabel('what-if result');
    await result.waitFor();
    expect(await result.locator('[data-field="replayed"]').textContent()).toBe(expected.replayed.toLocaleString('en-US'));
    for (const change of ['unchanged', 'newly_allowed', 'newly_asked', 'newly_denied'] as const) {
      expect(await result.locator(`[data-change="${change}"] dd`).textContent(), change).toBe(String(expected.changes[change]));
    }
    // Flagged rows come first, marked, before any sample.
    const tables = await result.getByRole('table').evaluateAll((t) => t.map((e) => e.getAttribute('aria-label')));
    expect(tables[0]).toBe('flagged commands');
    expect(tables).toContain('newly allowed samples');
    const flagged = result.getByRole('table', { name: 'flagged commands' }).locator('tbody tr');
    expect(await flagged.first().getAttribute('data-flag')).toBe('once denied');
    expect(await flagged.first().textContent()).toMatch(/once denied.*systemctl restart nginx/);
    expect(await result.getByRole('table', { name: 'newly allowed samples' }).locator('tr[data-flag="once denied"]').count()).toBeGreaterThan(0);
    await screenshot('policy-what-if');

    // An example the rule does not match: 400 invalid_policy, its problems beside the draft, nothing changed.
    await draft(page, { rules: [{ ...RESTARTS, examples: { match: ['systemctl stop nginx'] } }] });
    await page.getByRole('button', { name: 'What if' }).click();
    const problems = drafting(page).getByRole('list', { name: 'problems in the draft' });
    await problems.waitFor();
    expect(await problems.locator('li[data-rule-id="restart-services"]').textContent()).toMatch(/rule restart-services, example systemctl stop nginx: the rule does not match/);
    expect(await drafting(page).getByLabel('what-if result').count()).toBe(0);
    // The same for Apply, which changes nothing.
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/policy' && r.request().method() === 'PUT');
    await page.getByRole('button', { name: 'Apply draft' }).click();
    expect((await answered).status()).toBe(400);
    await problems.locator('li[data-rule-id="restart-services"]').waitFor();
    expect((await policy()).version).toBe(current.version);

    // A YAML draft is sent as YAML.
    await draft(page, `rules:\n  - id: restart-services\n    match: [systemctl, restart, [rclone-backup, nginx]]\n    targets: ["lxc:*"]\n    decision: allow\n    justification: routine\n`);
    expect(await page.getByText('read as YAML').count()).toBe(1);
    await page.getByRole('button', { name: 'What if' }).click();
    await drafting(page).getByLabel('what-if result').locator('[data-change="newly_allowed"] dd').filter({ hasText: /^[1-9]/ }).waitFor();
    await drafting(page).getByRole('table', { name: 'flagged commands' }).waitFor();
    expect(provoked(errors, 400)).toEqual([]);
  });

  it('shows an auditor all of it read-only: no Apply, shadow, Promote, Drop or Adopt button', async () => {
    const current = await policy();
    const shadow = await server.request('PUT', '/policy/shadow', { rules: [...current.rules, NO_UPTIME] }, as(OP));
    expect(shadow.status, JSON.stringify(shadow.body)).toBe(200);
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/policy`, { token: AUDIT });
    await page.getByRole('note').filter({ hasText: 'Only operators change the policy' }).waitFor();
    await page.getByRole('article', { name: 'rule no-reboot' }).first().waitFor();
    await page.getByRole('list', { name: 'policy versions' }).locator(`li[data-version="${current.version}"]`).waitFor();
    await page.locator('[data-field="shadow-counts"]').waitFor();
    // A suggestion is there to read (and to put into a draft), but not to adopt.
    const suggestion = page.getByRole('list', { name: 'suggested rules' }).locator(':scope > li').first();
    await suggestion.waitFor();
    expect(await suggestion.getByRole('button', { name: 'Add to draft' }).count()).toBe(1);
    for (const name of ['Apply draft', 'Run draft in shadow', 'Promote', 'Drop', 'Adopt']) {
      expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    }
    await screenshot('policy-auditor');
    // What-if reads only: an auditor may try a draft.
    await draft(page, { rules: [...current.rules, RESTARTS] });
    await page.getByRole('button', { name: 'What if' }).click();
    await drafting(page).getByLabel('what-if result').locator('[data-change="newly_allowed"] dd').filter({ hasText: /^[1-9]/ }).waitFor();
    expect(errors).toEqual([]);
    expect((await server.request('DELETE', '/policy/shadow', undefined, as(OP))).status).toBe(200);
  });

  it('adopts a suggestion drawn from the approvals, with its evidence, on the version shown', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/policy`, { token: OP });
    const list = page.getByRole('list', { name: 'suggested rules' });
    await list.waitFor();
    const suggested = (await server.request('GET', '/policy/suggestions', undefined, as(OP))).body.suggestions as Array<{ rule: { id: string; match: unknown[] }; evidence: { approvals: number; denials: number; sessions: number } }>;
    expect(suggested.length).toBeGreaterThan(0);
    const first = suggested[0]!;
    const item = list.locator(`li[data-rule-id="${first.rule.id}"]`);
    expect(await item.locator('[data-field="approvals"]').textContent()).toBe(String(first.evidence.approvals));
    expect(await item.locator('[data-field="denials"]').textContent()).toBe('0');
    expect(await item.locator('[data-field="sessions"]').textContent()).toBe(String(first.evidence.sessions));
    const before = await policy();
    await item.getByRole('button', { name: 'Adopt' }).click();
    await page.getByRole('status').filter({ hasText: `Adopted ${first.rule.id} as version ${before.version + 1}` }).waitFor();
    const after = await policy();
    expect(after.version).toBe(before.version + 1);
    expect(after.rules.map((r) => r.id)).toEqual([...before.rules.map((r) => r.id), first.rule.id]);
    await page.getByRole('article', { name: `rule ${first.rule.id}` }).first().waitFor();
    await page.getByRole('list', { name: 'policy versions' }).locator(`li[data-version="${after.version}"] [data-change="added"]`).filter({ hasText: first.rule.id }).waitFor();
    expect(errors).toEqual([]);
  });

  it('applies a draft with If-Match; a page left behind by another change says so, applies nothing, and shows the change', async () => {
    const { page, errors, context } = await browser.open(`${server.url}/#/policy`, { token: OP });
    await page.getByRole('article', { name: 'rule no-reboot' }).waitFor();
    let current = await policy();
    // The draft follows the rules in force while untouched: add a rule to it and apply.
    await draft(page, { rules: [...current.rules, RESTARTS] });
    await page.getByRole('button', { name: 'Apply draft' }).click();
    await page.getByRole('status').filter({ hasText: `Applied as version ${current.version + 1}` }).waitFor();
    current = await policy();
    expect(current.rules.map((r) => r.id)).toContain('restart-services');
    await page.getByRole('article', { name: 'rule restart-services' }).waitFor();

    // The page stops hearing of changes (its live feed held), another operator's change lands, then Apply.
    await context.route('**/changes*', () => undefined);
    await page.reload();
    await page.getByRole('article', { name: 'rule restart-services' }).waitFor();
    const other = await server.request('PUT', '/policy', { rules: [...current.rules, NO_UPTIME] }, as(OP, { 'if-match': `"${current.version}"` }));
    expect(other.status).toBe(200);
    await draft(page, { rules: [NO_REBOOT] });
    await page.getByRole('button', { name: 'Apply draft' }).click();
    await page.getByRole('alert').filter({ hasText: 'Another change came first' }).waitFor();
    expect((await policy()).version).toBe(current.version + 1);
    await page.locator('[data-field="version"]').filter({ hasText: `version ${current.version + 1},` }).waitFor();
    await page.getByRole('article', { name: 'rule no-uptime' }).waitFor();
    // The draft written is kept for another try.
    expect(await drafting(page).getByLabel(/Draft policy/).inputValue()).toBe(JSON.stringify({ rules: [NO_REBOOT] }, null, 2));
    // Back to no uptime rule, for the shadow's divergence below.
    expect((await server.request('PUT', '/policy', { rules: current.rules }, as(OP))).status).toBe(200);
    expect(provoked(errors, 409)).toEqual([]);
  });

  it('runs a draft in shadow, lists where it diverges, and promotes it', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/policy`, { token: OP });
    await page.getByText('No candidate runs in shadow.').waitFor();
    const current = await policy();
    await draft(page, { rules: [...current.rules, NO_UPTIME] });
    await page.getByRole('button', { name: 'Run draft in shadow' }).click();
    await page.getByRole('button', { name: 'Promote' }).waitFor();
    const ran = await run(sessions[1]!, 'uptime');
    expect(ran.status).not.toBe('refused');
    const row = page.getByRole('table', { name: 'shadow divergences' }).locator(`tr[data-execution-id="${ran.execution_id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toMatch(/uptime.*allow.*deny\s*no-uptime/);
    expect(await page.locator('[data-field="shadow-counts"]').textContent()).toMatch(/1 would have gone otherwise/);
    await page.getByRole('button', { name: 'Promote' }).click();
    await page.getByText('No candidate runs in shadow.').waitFor();
    const promoted = await policy();
    expect(promoted.version).toBe(current.version + 1);
    expect(promoted.rules.map((r) => r.id)).toContain('no-uptime');
    await page.getByRole('article', { name: 'rule no-uptime' }).waitFor();
    expect(errors).toEqual([]);
  });

  it('names the rule that decided each execution and approval on the session and approvals pages', async () => {
    const { version } = await policy();
    const ran = await run(sessions[2]!, 'systemctl restart rclone-backup');
    expect(ran.status).not.toBe('approval_required');
    const { page, errors } = await browser.open(`${server.url}/#/sessions/${sessions[2]}`, { token: OP });
    const executions = page.getByRole('region', { name: 'Executions' });
    await executions.locator('[data-field="rule"]').filter({ hasText: /^rule / }).first().waitFor();
    const labels = await executions.locator('[data-field="rule"]').allTextContents();
    expect(labels).toContain(`rule ${(await server.request('GET', `/executions/${ran.execution_id}`, undefined, as(OP))).body.rule_id} (v${version})`);
    expect(labels).toContain('classifier');
    expect(await page.getByRole('region', { name: 'Approvals' }).locator('[data-field="rule"]').allTextContents()).toEqual(['classifier', 'classifier']);

    await page.goto(`${server.url}/#/approvals`);
    const decided = page.getByRole('table', { name: 'recently decided approvals' });
    await decided.locator('tbody tr').first().waitFor();
    expect(new Set(await decided.locator('[data-field="rule"]').allTextContents())).toEqual(new Set(['classifier']));
    expect(errors).toEqual([]);
  });
});
