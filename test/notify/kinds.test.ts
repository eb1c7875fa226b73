// The two notices that are not approvals, each sent once to a real webhook receiver (its Standard Webhooks
// signature checked): a failed agent turn (the scripted model refuses the key: a real TurnFailed through /chat) and
// a hung execution (a real process in uninterruptible sleep on a real SSH peer, seen by the executor's probe);
// each message says what happened and links to the console under NOMOS_PUBLIC_URL, each attempt is in the outbox's
// tables, and a notifier restarted on the same database, while the execution is still hung, sends neither again.
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { Notice, renderMessage } from '../../src/notify/message.ts';
import { deliveryId } from '../../src/notify/notifier.ts';
import { openRuntime, type Runtime } from '../../src/runtime.ts';
import { type AgentWorld, startAgentWorld } from '../support/agent-world.ts';
import { databases } from '../support/databases.ts';
import { readSse } from '../support/sse-reader.ts';
import { sshOf } from '../support/ssh-peer.ts';
import { until } from '../support/until.ts';
import { httpReceiver, verifyWebhook, webhookSecret, type HttpReceiver, type Received } from './receivers.ts';

const PUBLIC_URL = 'https://nomos.example.org/ops';
const GOAL = 'Find out why the backups stopped';
const KEY_REFUSED = 'Incorrect API key provided: sk-rev*****oked';

describe.each(databases)('a failed turn and a hung execution, notified ($name)', (database) => {
  let world: AgentWorld;
  let hook: HttpReceiver;
  let dir: string;
  const secret = webhookSecret();
  const notifiers: Runtime[] = [];
  let chatSession: string;
  let hung: { session: string; execution_id: string; command: string };

  /** A notifier of its own on the server's database (as a second server would be), NOMOS_PUBLIC_URL set. */
  async function startNotifier(): Promise<Runtime> {
    const runtime = await openRuntime(loadConfig({ NOMOS_PUBLIC_URL: PUBLIC_URL }), { db: world.server.runtime.db });
    notifiers.push(runtime);
    runtime.startNotifier(world.server.url, { channels: [{ type: 'webhook', name: 'hook', events: ['turn_failed', 'execution_hung'], url: `${hook.url}/nomos`, secret }], pollMs: 100 });
    return runtime;
  }
  const delivered = (kind: string): Received[] => hook.received.filter((r) => r.status < 300 && JSON.parse(r.body).data.kind === kind);
  const oneOf = (kind: string) => until(`the ${kind} webhook`, () => Promise.resolve(delivered(kind).length > 0 ? delivered(kind)[0] : undefined));
  /** What a mail or a push says of the first notice of a kind (a webhook carries the same facts as data). */
  async function textOf(kind: string): Promise<string> {
    const { rows } = await world.server.runtime.db.query<{ notice: unknown }>('SELECT notice FROM notification_outbox WHERE kind = $1 ORDER BY created_at LIMIT 1', [kind]);
    return renderMessage(Notice.parse(rows[0]!.notice), new Date(), PUBLIC_URL).text;
  }
  /** A turn in the chat session, which the model's provider refuses. */
  async function failedTurn(message: string): Promise<void> {
    const res = await fetch(`${world.server.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session_id: chatSession, message }) });
    expect(res.status).toBe(200);
    const messages = await readSse(res, (m) => m.type === 'done');
    expect(messages.find((m) => m.type === 'error')?.data).toMatchObject({ reason: 'provider_error' });
  }

  beforeAll(async () => {
    hook = await httpReceiver();
    world = await startAgentWorld(database, { execution: { shortWaitMs: 1_000, hardLimitMs: 120_000, approvalTtlMs: 60_000, hungAfterMs: 300, heartbeatMs: 200 } });
    world.llm.respond(() => ({ status: 401, code: 'invalid_api_key', type: 'invalid_request_error', error: KEY_REFUSED }));
    world.server.runtime.agent!.logTo({ warn: () => undefined, error: () => undefined });
    expect((await world.server.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh: sshOf(world.peer) })).status).toBe(200);
    chatSession = (await world.server.request('POST', '/sessions')).body.session_id as string;
    expect((await world.server.request('POST', `/sessions/${chatSession}/commands`, { type: 'set_goal', goal: GOAL })).status).toBe(200);
    // A vfork parent waits in state D until its child execs; the child first blocks opening a FIFO nobody writes
    // to (as test/adapters/ssh-executor.test.ts does): a command hung in the kernel until the test opens it.
    dir = await mkdtemp(join(tmpdir(), 'nomos-hung-'));
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    await writeFile(join(dir, 'hang.py'), `import os\nos.posix_spawn("/bin/true", ["true"], os.environ, file_actions=[(os.POSIX_SPAWN_OPEN, 0, ${JSON.stringify(join(dir, 'fifo'))}, os.O_RDONLY, 0)])\n`);
    await startNotifier();
    await until('the notifier in its place', async () => ((await world.server.runtime.db.query("SELECT 1 FROM reactor_checkpoints WHERE name = 'notify'")).rows.length > 0 ? true : undefined));
  }, 60_000);

  afterAll(async () => {
    // Lets the hung command end, if a failed test left it waiting.
    if (dir) await open(join(dir, 'fifo'), constants.O_WRONLY | constants.O_NONBLOCK).then((f) => f.close()).catch(() => undefined);
    for (const n of notifiers) await n.close();
    await world?.close();
    await hook?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('sends a failed turn once: the session, the reason, the provider’s words and the goal, linking to the session', async () => {
    await failedTurn('Check the backup job');
    const request = await oneOf('turn_failed');
    expect(request.url).toBe('/nomos');
    expect(verifyWebhook(secret, request.headers, request.body)).toBe(true);
    const failedEvent = (await world.server.runtime.db.query<{ event_key: string }>("SELECT event_key FROM notification_outbox WHERE kind = 'turn_failed'")).rows[0]!.event_key;
    expect(request.headers['webhook-id']).toBe(deliveryId(failedEvent, 'turn_failed', 'hook'));
    const body = JSON.parse(request.body);
    expect(body).toMatchObject({ type: 'turn.failed', data: { kind: 'turn_failed', session_id: chatSession, reason: 'provider_error', goal: GOAL, link: `${PUBLIC_URL}/#/sessions/${chatSession}` } });
    expect(body.data.detail).toContain(KEY_REFUSED);
    expect(body.data.title).toBe(`Agent turn failed (provider_error) in session ${chatSession.slice(0, 8)}`);
    expect(body.timestamp).toBe(body.data.at);
    const text = await textOf('turn_failed');
    for (const line of ["The agent's turn failed: provider_error.", `Detail: 401 ${KEY_REFUSED}`, `Session goal: ${GOAL}`, `Session: ${PUBLIC_URL}/#/sessions/${chatSession}`]) expect(text).toContain(line);
  });

  it('sends a hung execution once: the command, the target, the execution and when, linking to the session', async () => {
    const session = (await world.server.request('POST', '/sessions')).body.session_id as string;
    const command = `python3 ${join(dir, 'hang.py')}`;
    const before = Date.now();
    // Code the command line does not show: the classifier asks, an operator approves, it runs (and hangs).
    const asked = await world.server.request('POST', `/sessions/${session}/commands`, { type: 'run', target: 'host:peer', command });
    expect(asked.body, JSON.stringify(asked.body)).toMatchObject({ status: 'approval_required' });
    const approved = await world.server.request('POST', `/approvals/${asked.body.approval_id as string}/approve`);
    expect(approved.body, JSON.stringify(approved.body)).toMatchObject({ status: 'granted', execution: { execution_id: asked.body.execution_id, status: 'pending' } });
    hung = { session, execution_id: asked.body.execution_id as string, command };
    const request = await oneOf('execution_hung');
    expect(verifyWebhook(secret, request.headers, request.body)).toBe(true);
    expect(request.headers['webhook-id']).toBe(deliveryId(hung.execution_id, 'execution_hung', 'hook'));
    const body = JSON.parse(request.body);
    expect(body).toMatchObject({
      type: 'execution.hung',
      data: { kind: 'execution_hung', session_id: hung.session, execution_id: hung.execution_id, command: hung.command, target: 'host:peer', link: `${PUBLIC_URL}/#/sessions/${hung.session}` },
    });
    expect(body.data.title).toBe(`Command hung on host:peer: ${hung.command}`);
    // How long it has run: since its start, before it was seen hung.
    expect(body.data.started_at).toEqual(expect.any(String));
    expect(Date.parse(body.data.started_at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(body.data.started_at)).toBeLessThan(Date.parse(body.data.at));
    const text = await textOf('execution_hung');
    for (const line of [`Command: ${command}`, 'Target: host:peer', `Execution: ${hung.execution_id}`, `Session: ${PUBLIC_URL}/#/sessions/${session}`]) expect(text).toContain(line);
    expect(text).toMatch(/^Running since: \S+ \(.+ ago\)$/m);
    // The executor says so too: the same execution, hung, in GET /executions/:id.
    expect((await world.server.request('GET', `/executions/${hung.execution_id}`)).body).toMatchObject({ status: 'hung' });
  });

  it('records one delivered attempt of each in the outbox, and a restarted notifier sends neither again', async () => {
    const attempts = await until('both attempts recorded', async () => {
      const { rows } = await world.server.runtime.db.query<{ kind: string; attempt: number; ok: boolean; status_code: number | null; error: string | null }>(
        'SELECT kind, attempt, ok, status_code, error FROM notification_attempts ORDER BY kind',
      );
      return rows.length === 2 ? rows : undefined;
    });
    expect(attempts).toEqual([
      { kind: 'execution_hung', attempt: 1, ok: true, status_code: 200, error: null },
      { kind: 'turn_failed', attempt: 1, ok: true, status_code: 200, error: null },
    ]);
    const outbox = await world.server.runtime.db.query<{ kind: string; event_key: string; session_id: string; status: string; attempts: number }>(
      'SELECT kind, event_key, session_id, status, attempts FROM notification_outbox ORDER BY kind',
    );
    expect(outbox.rows).toMatchObject([
      { kind: 'execution_hung', event_key: hung.execution_id, session_id: hung.session, status: 'delivered', attempts: 1 },
      { kind: 'turn_failed', session_id: chatSession, status: 'delivered', attempts: 1 },
    ]);

    await notifiers.shift()!.close();
    await startNotifier();
    // The restarted notifier is at work (it sends a turn failed after its start) while the execution is still hung.
    await failedTurn('Try once more');
    await until('the second failed turn', () => Promise.resolve(delivered('turn_failed').length === 2 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await world.server.runtime.db.query<{ state: string }>('SELECT state FROM execution_claims WHERE execution_id = $1', [hung.execution_id])).rows).toEqual([{ state: 'hung' }]);
    expect(hook.received.map((r) => [JSON.parse(r.body).data.kind, r.status])).toEqual([['turn_failed', 200], ['execution_hung', 200], ['turn_failed', 200]]);
    expect(new Set(hook.received.map((r) => r.headers['webhook-id'])).size).toBe(3);

    // Released, the command ends as any other.
    await open(join(dir, 'fifo'), constants.O_WRONLY | constants.O_NONBLOCK).then((f) => f.close());
    await until('the execution recorded as ended', async () => ((await world.server.request('GET', `/executions/${hung.execution_id}`)).body.status === 'succeeded' ? true : undefined));
  }, 60_000);
});
