// The approvals inbox in a real browser against a real SSH server: a destructive command waits in the inbox, one
// click runs it exactly once and shows its output; denial with a reason; an assent window; an auditor sees no
// decision controls and no chat box, and a forged approve from the auditor's page is refused without an event;
// an approval's link to its session as the log stood when it was asked.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { SshExecutor } from '../../src/adapters/ssh/executor.ts';
import { databases } from '../support/databases.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { type SshPeer, startSshPeer, sshOf } from '../support/ssh-peer.ts';
import { until } from '../support/until.ts';

const embedded = databases.find((d) => d.name === 'pglite')!;
const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,agent:nomos:agent-secret-1-long-enough-for-32-chars,auditor:audit:audit-secret-1-long-enough-for-32-chars');
const operator = { authorization: 'Bearer op-secret-1-long-enough-for-32-chars' };
const agent = { authorization: 'Bearer agent-secret-1-long-enough-for-32-chars' };
/** Chromium logs every response with an error status as a failed resource load; only the ones a test provokes may appear. */
const provoked = (errors: string[], status: number) => errors.filter((e) => !e.includes(`status of ${status}`));

describe('the approvals inbox', () => {
  let peer: SshPeer;
  let server: TestServer;
  let browser: TestBrowser;
  let session: string;
  const scratch = `/tmp/nomos-web-approvals-${randomUUID()}`;

  beforeAll(async () => {
    mkdirSync(scratch, { recursive: true });
    peer = await startSshPeer();
    // No model provider: the chat page must say so (503) rather than hang.
    server = await startTestServer(embedded, {
      tokens,
      executor: new SshExecutor({ privateKey: peer.privateKey }),
      execution: { shortWaitMs: 5_000, hardLimitMs: 60_000, approvalTtlMs: 15 * 60_000, hungAfterMs: 60_000 },
    });
    const reg = await server.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh: sshOf(peer) }, operator);
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    session = (await server.request('POST', '/sessions', undefined, agent)).body.session_id;
    expect((await server.request('POST', `/sessions/${session}/commands`, { type: 'set_goal', goal: 'Clean up the scratch area' }, agent)).status).toBe(200);
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await peer?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** Asks (as the agent) for a destructive command on the real SSH server: it waits for an operator. */
  const ask = async (name: string) => {
    writeFileSync(`${scratch}/${name}`, 'x');
    const res = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target: 'host:peer', command: `rm -rf ${scratch}/${name} && echo removed-${name}` }, agent);
    expect(res.body).toMatchObject({ status: 'approval_required', verdict: { risk_class: 'destructive' } });
    return res.body as { approval_id: string; execution_id: string };
  };
  const events = async () => (await server.request('GET', `/sessions/${session}/events`, undefined, operator)).body.events as Array<{ type: string; data: any }>;

  it('shows a pending destructive command with its rule, goal and countdown; one click on Approve runs it once and shows its output; deny takes a reason', async () => {
    const first = await ask('first');
    const second = await ask('second');
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/approvals`, { token: 'op-secret-1-long-enough-for-32-chars' });

    const card = page.locator(`article[data-approval-id="${first.approval_id}"]`);
    await card.waitFor();
    expect(await card.getByLabel('command').textContent()).toContain(`rm -rf ${scratch}/first`);
    expect(await card.textContent()).toMatch(/destructive/);
    expect(await card.textContent()).toMatch(/asked by agent:nomos/);
    // The rule and the classifier's reason for asking, from the verdict.
    const verdict = (await server.request('GET', '/approvals?status=pending', undefined, operator)).body.approvals.find((a: any) => a.id === first.approval_id).verdict;
    expect(await card.textContent()).toContain(verdict.rule);
    expect(await card.textContent()).toContain(verdict.reason);
    // The countdown ticks.
    const countdown = card.getByTestId('countdown');
    const before = await countdown.textContent();
    expect(before).toMatch(/expires in 1[45]:\d\d/);
    await until('the countdown to tick', async () => ((await countdown.textContent()) !== before ? true : undefined), 3_000);
    const group = page.getByRole('group', { name: 'session Clean up the scratch area' });
    expect(await group.getByRole('link', { name: 'Clean up the scratch area' }).getAttribute('href')).toBe(`#/sessions/${session}`);
    expect(await page.getByRole('navigation', { name: 'Main' }).getByLabel('2 pending').count()).toBe(1);

    // An assent window for the session, from its group.
    await group.getByLabel('Assent window (minutes)').fill('5');
    await group.getByRole('button', { name: 'Open assent window' }).click();
    await group.getByRole('status').filter({ hasText: 'assent open until' }).waitFor();
    expect((await events()).filter((e) => e.type === 'AssentOpened').map((e) => e.data.minutes)).toEqual([5]);

    await card.getByRole('button', { name: 'Approve' }).click();
    // While the approve request is answered, the card may show the execution twice over for a moment: first().
    await card.getByTestId('execution-status').filter({ hasText: 'succeeded' }).first().waitFor({ timeout: 15_000 });
    await card.getByLabel('output').filter({ hasText: 'removed-first' }).first().waitFor();
    expect(await card.getByLabel('output').count()).toBe(1);
    expect(existsSync(`${scratch}/first`)).toBe(false);
    // Still shown after the inbox re-read (it is no longer pending), and no Approve button to click twice.
    await page.getByRole('navigation', { name: 'Main' }).getByLabel('1 pending').waitFor();
    expect(await card.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await screenshot('approvals');
    const started = (await events()).filter((e) => e.type === 'ExecutionStarted' && e.data.execution_id === first.execution_id);
    expect(started).toHaveLength(1);

    const other = page.locator(`article[data-approval-id="${second.approval_id}"]`);
    await other.getByRole('button', { name: 'Deny' }).click();
    await other.getByLabel('Reason for denying').fill('not during backups');
    await other.getByRole('button', { name: 'Deny command' }).click();
    await other.getByText('denied', { exact: true }).waitFor();
    const row = page.getByRole('table', { name: 'recently decided approvals' }).locator(`tr[data-approval-id="${second.approval_id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toMatch(/denied.*operator:alice.*not during backups/);
    expect(existsSync(`${scratch}/second`)).toBe(true);
    expect((await events()).filter((e) => e.type === 'ExecutionStarted' && e.data.execution_id === second.execution_id)).toHaveLength(0);
    await page.getByText('Nothing waits for a decision.').waitFor();
    expect(errors).toEqual([]);
  });

  it('links an approval to its session as the log stood when it was asked: the goal, plan and command then, and back to now', async () => {
    const other = (await server.request('POST', '/sessions', undefined, agent)).body.session_id as string;
    const command = async (body: object) => {
      const res = await server.request('POST', `/sessions/${other}/commands`, body, agent);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    };
    await command({ type: 'set_goal', goal: 'Tidy the scratch area' });
    await command({ type: 'propose_plan', steps: [{ title: 'remove the stale marker', target: 'host:peer' }] });
    writeFileSync(`${scratch}/as-asked`, 'x');
    const asked = await command({ type: 'run', target: 'host:peer', command: `rm -rf ${scratch}/as-asked` });
    expect(asked.status).toBe('approval_required');
    // The session moves on after the request: another goal, another plan.
    await command({ type: 'set_goal', goal: 'Something else entirely' });
    await command({ type: 'propose_plan', steps: [{ title: 'a later step' }] });
    const listed = (await server.request('GET', `/approvals?session_id=${other}`, undefined, operator)).body.approvals as Array<{ id: string; requested_position: number }>;
    const all = (await server.request('GET', `/sessions/${other}/events`, undefined, operator)).body.events as Array<{ type: string; position: number; data: any }>;
    const request = all.find((e) => e.type === 'ApprovalRequested' && e.data.approval_id === asked.approval_id)!;
    const position = listed.find((a) => a.id === asked.approval_id)!.requested_position;
    expect(position).toBe(request.position);

    const { page, errors } = await browser.open(`${server.url}/#/approvals`, { token: 'op-secret-1-long-enough-for-32-chars' });
    const card = page.locator(`article[data-approval-id="${asked.approval_id}"]`);
    await card.getByRole('link', { name: 'session as asked' }).click();
    await page.waitForURL(new RegExp(`#/sessions/${other}\\?at_position=${position}$`));
    await page.getByRole('note', { name: `as of position ${position}` }).waitFor();
    expect(await page.getByLabel('goal then').textContent()).toBe('Tidy the scratch area');
    expect(await page.getByLabel('plan steps then').textContent()).toContain('remove the stale marker');
    expect(await page.getByLabel('plan steps then').textContent()).not.toContain('a later step');
    expect(await page.getByLabel('command asked').textContent()).toBe(`$ rm -rf ${scratch}/as-asked`);
    expect(await page.getByRole('heading', { name: `At position ${position}: ApprovalRequested` }).count()).toBe(1);
    // Back to the session as it is now: the later goal.
    await page.getByRole('link', { name: 'See the session now' }).click();
    await page.getByRole('heading', { level: 1, name: 'Something else entirely' }).waitFor();
    expect(await page.getByRole('note', { name: /as of position/ }).count()).toBe(0);
    // A position past the log's end is the server's 400, in words.
    await page.goto(`${server.url}/#/sessions/${other}?at_position=999999999`);
    await page.getByRole('alert').filter({ hasText: 'past the log' }).waitFor();
    expect(provoked(errors, 400)).toEqual([]);
  });

  it('shows an auditor what waits with no Approve button and no chat box; a forged approve from that page is refused and records nothing', async () => {
    const waiting = await ask('audited');
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/approvals`, { token: 'audit-secret-1-long-enough-for-32-chars' });
    const card = page.locator(`article[data-approval-id="${waiting.approval_id}"]`);
    await card.waitFor();
    await card.getByText('awaiting an operator’s decision').waitFor();
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Deny' }).count()).toBe(0);
    expect(await page.getByLabel('Assent window (minutes)').count()).toBe(0);
    await screenshot('approvals-auditor');

    const before = (await events()).length;
    const forged = await page.evaluate(async (id) => {
      const res = await fetch(`/approvals/${id}/approve`, { method: 'POST', headers: { authorization: 'Bearer audit-secret-1-long-enough-for-32-chars', 'content-type': 'application/json' }, body: '{}' });
      return { status: res.status, body: (await res.json()) as { code?: string } };
    }, waiting.approval_id);
    expect(forged.status).toBe(403);
    expect((await events()).length).toBe(before);
    expect(existsSync(`${scratch}/audited`)).toBe(true);

    await page.goto(`${server.url}/#/chat/${session}`);
    await page.getByRole('note').filter({ hasText: 'Read-only' }).waitFor();
    expect(await page.getByLabel('Message to the agent').count()).toBe(0);
    expect(await page.getByRole('button', { name: /Cancel turn|Continue/ }).count()).toBe(0);
    // The session's history is there to read: the approval it waits on, without controls.
    await page.getByRole('group', { name: `approval for rm -rf ${scratch}/audited && echo removed-audited` }).waitFor();
    // The forged request's 403 is the one failed load, provoked on purpose.
    expect(provoked(errors, 403)).toEqual([]);
  });

  it('says there is no model provider when an operator chats with a server that has none, and keeps the message', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/chat`, { token: 'op-secret-1-long-enough-for-32-chars' });
    const box = page.getByLabel('Message to the agent');
    await box.fill('is anyone there?');
    await box.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'no model provider is configured' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('(no_model_provider)');
    expect(await box.inputValue()).toBe('is anyone there?');
    expect(await page.getByTestId('user-message').count()).toBe(0);
    // The 503 answer to POST /chat is what this test provokes.
    expect(provoked(errors, 503)).toEqual([]);
  });
});
