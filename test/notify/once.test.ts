// A notification is sent once, not twice: across a restart of the server that notifies (what it owed before it
// stopped is sent after, what happened while it was down too, and nothing again), and with two servers on one
// PostgreSQL (one notifies; and even two deliverers sending at once never send one row twice).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresDb } from '../../src/adapters/db/postgres.ts';
import { senderFor } from '../../src/adapters/notify/senders.ts';
import { loadConfig } from '../../src/config.ts';
import type { Channel } from '../../src/notify/channels.ts';
import { DEFAULT_NOTIFIER_SETTINGS, Notifier } from '../../src/notify/notifier.ts';
import { enqueue } from '../../src/notify/outbox.ts';
import { openRuntime, type Runtime } from '../../src/runtime.ts';
import { databases, postgresDatabase } from '../support/databases.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { pendingApproval } from '../support/pending-approval.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { httpReceiver, verifyWebhook, webhookSecret, type HttpReceiver } from './receivers.ts';

const secret = webhookSecret();
const hookTo = (receiver: HttpReceiver): Channel => ({ type: 'webhook', name: 'hook', events: ['approval_requested'], url: receiver.url, secret });
const FAST = { publicUrl: 'http://console.test', pollMs: 50, retryFirstMs: 200, onError: (error: unknown) => console.error(error) };

/** The ids the receiver got, with how many times each came with a 2xx answer. */
function deliveredIds(receiver: HttpReceiver): Map<string, number> {
  const ids = new Map<string, number>();
  for (const r of receiver.received) if (r.status < 300) ids.set(String(r.headers['webhook-id']), (ids.get(String(r.headers['webhook-id'])) ?? 0) + 1);
  return ids;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 1_000));

describe.each(databases)('a notification across a restart ($name)', (database) => {
  let server: TestServer;
  let receiver: HttpReceiver;
  const notifiers: Runtime[] = [];

  beforeAll(async () => {
    receiver = await httpReceiver();
    server = await startTestServer(database, { executor: instantExecutor() });
  }, 60_000);

  afterAll(async () => {
    for (const n of notifiers) await n.close();
    await server?.close();
    await receiver?.close();
  });

  it('is sent after the restart when it failed before, an approval asked while down is sent too, and nothing twice', async () => {
    // The notifying server shares the API server's database (on PGlite: its one connection).
    const first = await openRuntime(loadConfig({}), { db: server.runtime.db });
    notifiers.push(first);
    receiver.answer = () => 503;
    first.startNotifier(server.url, { ...FAST, channels: [hookTo(receiver)] });
    await until('the notifier in its place', async () => ((await server.runtime.db.query("SELECT 1 FROM reactor_checkpoints WHERE name = 'notify'")).rows.length > 0 ? true : undefined));
    const pending = await pendingApproval(server);
    await until('a failed attempt recorded', async () => ((await server.runtime.db.query('SELECT 1 FROM notification_attempts')).rows.length > 0 ? true : undefined));
    await first.close();
    const seenWhileUp = receiver.received.length;

    // While no server notifies: a second approval in the same session, and the receiver back up.
    const second = await server.request('POST', `/sessions/${pending.session}/commands`, { type: 'run', target: 'lxc:box', command: 'chown :0 /srv/other' });
    expect(second.body).toMatchObject({ status: 'approval_required' });
    receiver.answer = () => 200;
    await settle();
    expect(receiver.received.length).toBe(seenWhileUp);

    const restarted = await openRuntime(loadConfig({}), { db: server.runtime.db });
    notifiers.push(restarted);
    restarted.startNotifier(server.url, { ...FAST, channels: [hookTo(receiver)] });
    await until('both delivered', () => Promise.resolve(deliveredIds(receiver).size === 2 ? true : undefined));
    await settle();
    const ids = deliveredIds(receiver);
    expect([...ids.values()]).toEqual([1, 1]);
    for (const r of receiver.received) expect(verifyWebhook(secret, r.headers, r.body)).toBe(true);
    const approvals = receiver.received.filter((r) => r.status < 300).map((r) => JSON.parse(r.body).data.approval_id as string);
    expect(approvals.sort()).toEqual([pending.approval_id, second.body.approval_id as string].sort());
    // The first approval's failed attempts came with the same id as its delivery.
    const firstId = receiver.received.find((r) => r.status < 300 && JSON.parse(r.body).data.approval_id === pending.approval_id)!.headers['webhook-id'];
    expect(receiver.received.filter((r) => r.status >= 300).every((r) => r.headers['webhook-id'] === firstId)).toBe(true);
    const states = (await server.request('GET', `/approvals/${pending.approval_id}/notifications`)).body.notifications;
    expect(states).toMatchObject([{ channel: 'hook', status: 'delivered', attempts: seenWhileUp + 1, last_error: null }]);
  }, 60_000);
});

describe.runIf(postgresDatabase !== null)('a notification with two servers on one PostgreSQL (needs DATABASE_URL)', () => {
  let server: TestServer;
  let receiver: HttpReceiver;
  const runtimes: Runtime[] = [];

  beforeAll(async () => {
    receiver = await httpReceiver();
    server = await startTestServer(postgresDatabase!, { executor: instantExecutor() });
  }, 60_000);

  afterAll(async () => {
    for (const r of runtimes) {
      await r.close();
      await r.db.close();
    }
    await server?.close();
    await receiver?.close();
  });

  it('is sent once by the two servers notifying', async () => {
    const { rows } = await server.runtime.db.query<{ url: string }>("SELECT 'postgres://postgres@127.0.0.1:5432/' || current_database() AS url");
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${rows[0]!.url.split('/').at(-1)!}`;
    for (let i = 0; i < 2; i++) {
      const runtime = await openRuntime(loadConfig({}), { db: postgresDb(url.toString()) });
      runtimes.push(runtime);
      runtime.startNotifier(server.url, { ...FAST, channels: [hookTo(receiver)] });
    }
    await until('the notifier in its place', async () => ((await server.runtime.db.query("SELECT 1 FROM reactor_checkpoints WHERE name = 'notify'")).rows.length > 0 ? true : undefined));
    const first = await pendingApproval(server);
    for (const command of ['chown :0 /srv/a', 'chown :0 /srv/b']) {
      expect((await server.request('POST', `/sessions/${first.session}/commands`, { type: 'run', target: 'lxc:box', command })).body).toMatchObject({ status: 'approval_required' });
    }
    await until('three delivered', () => Promise.resolve(deliveredIds(receiver).size === 3 ? true : undefined));
    await settle();
    expect(receiver.received).toHaveLength(3);
    expect([...deliveredIds(receiver).values()]).toEqual([1, 1, 1]);
  }, 60_000);

  it('never sends a row twice when two deliverers claim at once', async () => {
    receiver.received.length = 0;
    const channels = [hookTo(receiver)];
    for (let i = 0; i < 40; i++) {
      const key = crypto.randomUUID();
      await enqueue(server.runtime.db, key, { kind: 'turn_failed', session_id: crypto.randomUUID(), reason: 'provider_error', detail: `failure ${i}`, at: new Date().toISOString(), goal: null }, [{ ...channels[0]!, events: ['turn_failed'] }]);
    }
    const senders = new Map(channels.map((c) => [c.name, senderFor(c)]));
    const settings = { ...DEFAULT_NOTIFIER_SETTINGS, publicUrl: 'http://console.test', channels };
    // Each deliverer on its own connection pool, as two servers would be; no lease between them.
    const [a, b] = runtimes.map((r) => new Notifier(r.store, r.db, senders, settings, () => undefined));
    // The notifier of whichever server leads sends too: three deliverers at once.
    await Promise.all([a!.deliverDue(), b!.deliverDue()]);
    await until('all delivered', async () => {
      const { rows } = await server.runtime.db.query<{ n: number }>("SELECT count(*)::int AS n FROM notification_outbox WHERE kind = 'turn_failed' AND status = 'delivered'");
      return rows[0]!.n === 40 ? true : undefined;
    });
    await settle();
    expect(receiver.received).toHaveLength(40);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(40);
  });
});
