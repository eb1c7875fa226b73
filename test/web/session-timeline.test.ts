// The session page's transcript as one timeline, in a real browser against a real server and real events: each
// command stands where it happened with the call that asked for it, its approval (asked, then granted by the
// operator later, after the agent had answered) and its end; a goal set by a call reads as a line, a plan as a
// checklist, a command's output as output, each with its raw JSON one click away; the headline's counts agree
// with the API's and say why tool calls and executions differ; the freshness is said in words.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { applied, command } from './sessions-fixtures.ts';

const embedded = databases.find((d) => d.name === 'pglite')!;
const PLAN = [{ title: 'inspect the timer', target: 'host:fake', command: 'uptime' }, { title: 'restart the service' }];

describe('a session as one timeline', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let id: string;
  let ran: { execution_id: string };
  let queued: { execution_id: string; approval_id: string };
  let direct: { execution_id: string };

  beforeAll(async () => {
    server = await startTestServer(embedded, { executor: instantExecutor('fake output of') });
    browser = await launchBrowser();
    const reg = await server.request('POST', '/entities', { entities: [{ slug: 'host:fake', type: 'host', ssh: { host: '127.0.0.1', port: 22, user: 'root' } }] });
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    const started = await server.request('POST', '/sessions');
    expect(started.status).toBe(201);
    id = started.body.session_id;
    // A call the way the agent makes one: requested, what it does (a session command or a run), completed with its result.
    const call = async (toolCallId: string, name: string, args: Record<string, unknown>, act: () => Promise<unknown>) => {
      await command(server, id, { type: 'record_tool_call_requested', tool_call_id: toolCallId, name, args });
      const result = await act();
      return command(server, id, { type: 'record_tool_call_completed', tool_call_id: toolCallId, result });
    };
    await command(server, id, { type: 'post_user_message', text: 'the rclone backup is broken again' });
    await call('goal', 'set_goal', { goal: 'Fix the rclone backup on host:fake' }, async () => {
      const r = await command(server, id, { type: 'set_goal', goal: 'Fix the rclone backup on host:fake' });
      return { position: r.position };
    });
    const steps = PLAN;
    await call('plan', 'propose_plan', { steps }, async () => {
      const r = await command(server, id, { type: 'propose_plan', steps });
      return { generation: 1, position: r.position };
    });
    await command(server, id, { type: 'update_plan_step', seq: 1, status: 'running' });
    await command(server, id, { type: 'update_plan_step', seq: 1, status: 'done' });
    await call('t1', 'run', { target: 'host:fake', command: 'uptime' }, async () => (ran = await command(server, id, { type: 'run', target: 'host:fake', command: 'uptime' })));
    await call('t2', 'run', { target: 'host:fake', command: 'systemctl restart rclone-backup.service' }, async () => (queued = await command(server, id, { type: 'run', target: 'host:fake', command: 'systemctl restart rclone-backup.service' })));
    await command(server, id, { type: 'record_assistant_message', text: 'The timer is fine; the restart waits for your approval.' });
    // The operator approves later, after the agent has answered: it runs then, and stands there in the timeline.
    const approved = await server.request('POST', `/approvals/${queued.approval_id}/approve`, {}, { 'x-nomos-actor': 'operator:ana' });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    await command(server, id, { type: 'post_user_message', text: 'and check the disk while you are at it' });
    // A command sent straight to the API, no tool call asking for it (as the README's tour does).
    direct = await command(server, id, { type: 'run', target: 'host:fake', command: 'df -h' });
    const last = await command(server, id, { type: 'record_assistant_message', text: 'The disk has room.' });
    await applied(server, last.position);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows each command and its approval where it happened, results for what they are, counts that agree, freshness in words', async () => {
    expect(queued.approval_id).toBeTruthy();
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/sessions/${id}`);
    await page.getByRole('heading', { level: 1, name: 'Fix the rclone backup on host:fake' }).waitFor();
    const timeline = page.getByRole('list', { name: 'timeline' });
    await timeline.getByText('The disk has room.').waitFor();

    // The order of the log: messages, the calls that ran nothing, each command, the approval granted later.
    const order = await timeline.locator(':scope > li').evaluateAll((items) => items.map((li) => li.getAttribute('aria-label') ?? `group: ${li.querySelector('summary')?.textContent ?? ''}`));
    expect(order).toEqual([
      'user message',
      'group: 2 tool calls: set_goal, propose_plan',
      'execution uptime',
      'execution systemctl restart rclone-backup.service',
      'assistant message',
      'execution systemctl restart rclone-backup.service (continued)',
      'user message',
      'execution df -h',
      'assistant message',
    ]);

    // The waiting command: its call, then the approval asked; the approval granted by the operator, then the run, later.
    const asked = timeline.getByRole('listitem', { name: 'execution systemctl restart rclone-backup.service', exact: true });
    expect(await asked.locator(`#call-t2`).count()).toBe(1);
    expect(await asked.locator('[data-step]').evaluateAll((s) => s.map((e) => e.getAttribute('data-step')))).toEqual(['requested', 'approval_requested']);
    expect(await asked.getByRole('link', { name: 'approval', exact: true }).getAttribute('href')).toContain(`focus=approval-${queued.approval_id}`);
    const granted = timeline.getByRole('listitem', { name: 'execution systemctl restart rclone-backup.service (continued)' });
    expect(await granted.locator('[data-step]').evaluateAll((s) => s.map((e) => e.getAttribute('data-step')))).toEqual(['granted', 'started', 'succeeded']);
    expect(await granted.locator('[data-step="granted"]').innerText()).toContain('approved by operator:ana');
    expect(await granted.getByLabel('output of systemctl restart rclone-backup.service').innerText()).toContain('fake output of systemctl restart rclone-backup.service');
    // The command sent straight to the API stands on its own, with no call.
    const df = timeline.getByRole('listitem', { name: 'execution df -h' });
    expect(await df.locator('li.call').count()).toBe(0);
    expect(await df.getByRole('link', { name: 'execution details' }).getAttribute('href')).toContain(`focus=exec-${direct.execution_id}`);
    expect(await df.getByLabel('output of df -h').innerText()).toContain('fake output of df -h');

    // A command's output as output, beside the call that asked for it.
    const uptime = timeline.getByRole('listitem', { name: 'execution uptime' });
    expect(await uptime.locator('#call-t1').count()).toBe(1);
    expect(await uptime.getByLabel('output of uptime').innerText()).toContain('fake output of uptime');
    expect(await uptime.getByRole('link', { name: 'execution details' }).getAttribute('href')).toContain(`focus=exec-${ran.execution_id}`);

    // The goal as a line, the plan as a checklist with each step's state now; raw JSON one click away.
    await timeline.locator('details.calls > summary').click();
    expect(await page.locator('#call-goal').getByLabel('goal set').innerText()).toBe('Goal: Fix the rclone backup on host:fake');
    const checklist = page.locator('#call-plan').getByRole('list', { name: 'plan proposed (generation 1)' });
    const items = (await checklist.getByRole('listitem').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
    expect(items).toEqual(['☑ done inspect the timer host:fake uptime', '☐ pending restart the service']);
    const raw = page.locator('#call-plan').getByLabel('raw JSON of propose_plan');
    expect(await raw.isVisible()).toBe(false);
    await page.locator('#call-plan').getByRole('button', { name: 'raw JSON' }).click();
    await raw.waitFor({ state: 'visible' });
    expect(JSON.parse(await raw.innerText())).toMatchObject({ name: 'propose_plan', args: { steps: PLAN }, result: { generation: 1 } });

    // Counts from the same lists the timeline shows, agreeing with the API, and the difference said in words.
    const detail = (await server.request('GET', `/sessions/${id}`)).body;
    expect(detail.session.tool_call_count).toBe(4);
    expect(detail.session.executions_count).toBe(3);
    expect(await page.locator('[data-fact="tool_calls"] dd').innerText()).toBe('4 (run ×2, propose_plan ×1, set_goal ×1)');
    expect(await page.locator('[data-fact="executions"] dd').innerText()).toBe('3');
    expect(await page.getByLabel('how the counts relate').innerText()).toBe('2 executions asked for by tool calls; 1 execution sent straight to the API (its run or inspect_path command), not by a tool call.');

    // Freshness in words, naming the event the page reflects.
    const freshness = page.getByRole('status', { name: 'freshness' });
    const head = (await server.request('GET', `/sessions/${id}`)).body.as_of_position;
    const words = `Up to date: shows everything recorded up to event #${head}, the latest in the log`;
    await until('the freshness in words', async () => ((await freshness.innerText()) === words ? true : undefined), 10_000, 50);
    expect(await page.locator('.session').innerText()).not.toContain('as of position');

    await page.evaluate('window.scrollTo(0, 0)');
    await screenshot('session-timeline');
    expect(errors).toEqual([]);
  });
});

