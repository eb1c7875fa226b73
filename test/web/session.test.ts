// The console's page for one session in a real browser: headline, goals and plan, the transcript with each turn's
// tool calls as a group that opens and closes (long results cut, "Show all" for the rest), executions and
// approvals linked to the calls that caused them, the raw events, live updates, and a clear answer for no session.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { applied, command, writeSession } from './sessions-fixtures.ts';

const embedded = databases.find((d) => d.name === 'pglite')!;

/** A host that runs every command at once and prints its name: the page is under test here, not SSH. */
const fakeExecutor = instantExecutor('fake output of');

describe('one session', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let id: string;
  let ran: { execution_id: string };
  let queued: { execution_id: string; approval_id: string };
  const LONG = `${'0123456789'.repeat(300)}END-OF-THE-LONG-RESULT`;

  beforeAll(async () => {
    server = await startTestServer(embedded, { executor: fakeExecutor });
    browser = await launchBrowser();
    const reg = await server.request('POST', '/entities', { entities: [{ slug: 'host:fake', type: 'host', ssh: { host: '127.0.0.1', port: 22, user: 'root' } }] });
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    const session = await writeSession(server, {
      user: 'the rclone backup is broken again',
      goal: 'Fix the rclone backup on host:fake',
      plan: ['inspect the timer', 'raise the memory limit'],
      steps: [[1, 'running'], [1, 'done'], [2, 'running']],
    });
    id = session.id;
    // A run the way the agent makes one: the call, the command through the API, the call's result naming the execution.
    const call = async (toolCallId: string, name: string, args: Record<string, unknown>, finish: () => Promise<{ result?: unknown; error?: string }>) => {
      await command(server, id, { type: 'record_tool_call_requested', tool_call_id: toolCallId, name, args });
      const outcome = await finish();
      return command(server, id, { type: 'record_tool_call_completed', tool_call_id: toolCallId, ...outcome });
    };
    await call('t1', 'run', { target: 'host:fake', command: 'uptime' }, async () => {
      ran = await command(server, id, { type: 'run', target: 'host:fake', command: 'uptime' });
      return { result: ran };
    });
    await call('t2', 'read_log', { target: 'host:fake', path: '/var/log/rclone.log' }, () => Promise.resolve({ result: LONG }));
    await call('t3', 'search_knowledge', { query: 'rclone memory' }, () => Promise.resolve({ error: 'the knowledge index is empty' }));
    await call('t4', 'run', { target: 'host:fake', command: 'systemctl restart rclone-backup.service' }, async () => {
      queued = await command(server, id, { type: 'run', target: 'host:fake', command: 'systemctl restart rclone-backup.service' });
      return { result: queued };
    });
    const last = await command(server, id, { type: 'record_assistant_message', text: 'The timer is fine; the restart waits for your approval.' });
    await applied(server, last.position);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the headline, goals, plan, transcript, tool calls, executions, approvals and events', async () => {
    expect(queued.approval_id).toBeTruthy();
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/sessions/${id}`);
    await page.getByRole('heading', { level: 1, name: 'Fix the rclone backup on host:fake' }).waitFor();
    expect(await page.getByLabel('status active').count()).toBe(1);
    expect(await page.getByRole('link', { name: 'Continue in chat' }).getAttribute('href')).toBe(`#/chat/${id}`);

    // Goals and the plan with each step's state.
    const goals = page.getByRole('region', { name: 'Goals' });
    expect(await goals.innerText()).toMatch(/open\s+Fix the rclone backup on host:fake/);
    const plan = page.getByRole('list', { name: 'plan generation 1' });
    expect(await plan.getByRole('listitem').allInnerTexts()).toEqual(['done inspect the timer', 'running raise the memory limit']);

    // The transcript: both messages, the runs where they happened (test/web/session-timeline.test.ts covers that),
    // and the two calls between them that ran nothing in one closed group.
    const transcript = page.getByRole('region', { name: 'Transcript' });
    await transcript.getByText('the rclone backup is broken again').waitFor();
    await transcript.getByText('The timer is fine; the restart waits for your approval.').waitFor();
    const group = transcript.locator('details.calls');
    const summary = group.locator('> summary');
    expect(await summary.innerText()).toBe('2 tool calls: read_log, search_knowledge');
    const args = page.getByLabel('arguments of read_log', { exact: true });
    expect(await args.isVisible()).toBe(false);
    await summary.click();
    await args.waitFor({ state: 'visible' });
    expect(await args.innerText()).toContain('/var/log/rclone.log');
    expect(await page.getByLabel('error of search_knowledge').innerText()).toBe('the knowledge index is empty');

    // A long result is cut until asked for in full.
    const result = page.getByLabel('result of read_log', { exact: true });
    expect(await result.innerText()).not.toContain('END-OF-THE-LONG-RESULT');
    expect(await result.innerText()).toContain('more characters');
    await page.getByRole('button', { name: 'Show all of result of read_log' }).click();
    expect(await result.innerText()).toBe(LONG);

    // The run's call leads to its execution, which is followed by the shared status view.
    const execution = page.locator(`#exec-${ran.execution_id}`);
    expect(await execution.getByTestId('execution-status').innerText()).toBe('succeeded');
    expect(await execution.getByLabel('output').innerText()).toContain('fake output of uptime');
    await page.getByRole('link', { name: `execution ${ran.execution_id.slice(0, 8)}` }).first().click();
    await page.waitForURL(new RegExp(`focus=exec-${ran.execution_id}`));
    await page.locator(`#exec-${ran.execution_id}[data-focused]`).waitFor();

    // The queued restart: a pending approval that may be decided here, linked both ways.
    const approval = page.locator(`#approval-${queued.approval_id}`);
    expect(await approval.innerText()).toContain('pending');
    expect(await approval.getByRole('button', { name: 'Approve' }).count()).toBe(1);
    expect(await approval.getByLabel('approval command').innerText()).toBe('$ systemctl restart rclone-backup.service');
    await page.locator(`#exec-${queued.execution_id}`).getByRole('link', { name: 'tool call' }).click();
    await page.locator('#call-t4[data-focused]').waitFor();

    // Collapsing the group hides its calls again, and a live update (the address still points into it) leaves it so.
    await summary.click();
    await args.waitFor({ state: 'hidden' });
    await command(server, id, { type: 'post_user_message', text: 'a question asked while the page is open' });
    await transcript.getByText('a question asked while the page is open').waitFor();
    expect(await args.isVisible()).toBe(false);

    // The raw events, as the store holds them.
    const stored = (await server.request('GET', `/sessions/${id}/events`)).body.events;
    await page.getByRole('heading', { name: `Events (${stored.length})` }).click();
    const events = page.getByRole('table', { name: 'Events' });
    expect(await events.locator('tbody tr').count()).toBe(stored.length);
    const goalSet = stored.find((e: { type: string }) => e.type === 'GoalSet');
    const row = page.locator(`#event-${goalSet.position}`);
    expect(await row.innerText()).toContain('GoalSet');
    await row.getByText('data').click();
    expect(await row.getByLabel(`data of event ${goalSet.position}`).innerText()).toContain('"goal": "Fix the rclone backup on host:fake"');

    await page.evaluate('window.scrollTo(0, 0)');
    await screenshot('session');
    expect(errors).toEqual([]);
  });

  it('shows what is appended while it is open, without a reload', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/sessions/${id}`);
    const transcript = page.getByRole('region', { name: 'Transcript' });
    await transcript.getByText('The timer is fine; the restart waits for your approval.').waitFor();
    await command(server, id, { type: 'post_user_message', text: 'leave it for now' });
    await transcript.getByText('leave it for now').waitFor();

    // Completing it while the approval still waits: outcome, blocker with its evidence, approval cancelled.
    await command(server, id, { type: 'complete_task', outcome: 'partial', summary: 'diagnosed; the restart was not approved in time' });
    await page.getByLabel('outcome partial').waitFor();
    const blocker = page.getByLabel('blocker');
    expect(await blocker.innerText()).toMatch(/^Blocker: approval_timeout — from event: .+/);
    await page.getByLabel('summary').getByText('diagnosed; the restart was not approved in time').waitFor();
    await page.locator(`#approval-${queued.approval_id} .badge`, { hasText: 'cancelled' }).waitFor();
    expect(await page.locator(`#approval-${queued.approval_id}`).getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Goals' }).innerText()).toMatch(/completed\s+partial/);
    expect(await page.getByRole('list', { name: 'plan generation 1' }).getByRole('listitem').allInnerTexts()).not.toContain('running raise the memory limit');
    expect(errors).toEqual([]);
  });

  it('reads in a dark colour scheme and at a phone’s width', async () => {
    const dark = await browser.open(`${server.url}/#/sessions/${id}`, { colorScheme: 'dark' });
    await dark.page.getByRole('heading', { level: 1, name: 'Fix the rclone backup on host:fake' }).waitFor();
    await dark.page.locator('details.calls > summary').click();
    expect(await dark.page.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(15, 18, 22)');
    await dark.screenshot('session-dark');
    expect(dark.errors).toEqual([]);

    const phone = await browser.open(`${server.url}/#/sessions/${id}`, { width: 390, height: 844 });
    await phone.page.getByRole('heading', { level: 1, name: 'Fix the rclone backup on host:fake' }).waitFor();
    expect(await phone.page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await phone.screenshot('session-phone');
    expect(phone.errors).toEqual([]);
  });

  it('says plainly when there is no such session', async () => {
    for (const missing of [randomUUID(), 'not-a-session-id']) {
      const { page, errors } = await browser.open(`${server.url}/#/sessions/${missing}`);
      await page.getByRole('heading', { name: 'No session' }).waitFor();
      expect(await page.getByRole('status').filter({ hasText: 'There is no session' }).innerText()).toContain(missing);
      // Chromium logs the refused read itself (404, or 400 for an id that is no UUID); nothing else may appear.
      expect(errors.filter((e) => !/status of 40[04]/.test(e))).toEqual([]);
    }
  });
});
