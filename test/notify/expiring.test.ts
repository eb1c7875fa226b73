// An approval about to lapse is brought up again: once 80 % of its TTL has passed (2 minutes before, for the
// usual 15), its channels get an "expiring" message, once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { pendingApproval } from '../support/pending-approval.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { httpReceiver, verifyWebhook, webhookSecret, type HttpReceiver } from './receivers.ts';

describe.each(databases)('an approval about to expire ($name)', (database) => {
  let server: TestServer;
  let receiver: HttpReceiver;
  const secret = webhookSecret();

  beforeAll(async () => {
    receiver = await httpReceiver();
    server = await startTestServer(database, { executor: instantExecutor(), execution: { approvalTtlMs: 10_000 } });
    server.runtime.startNotifier(server.url, { channels: [{ type: 'webhook', name: 'hook', events: ['approval_expiring'], url: receiver.url, secret }], pollMs: 100 });
    await until('the notifier in its place', async () => ((await server.runtime.db.query("SELECT 1 FROM reactor_checkpoints WHERE name = 'notify'")).rows.length > 0 ? true : undefined));
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('is sent once, after 80 % of the TTL and before it lapses', async () => {
    const pending = await pendingApproval(server);
    const [request] = await until('the reminder', () => Promise.resolve(receiver.received.length > 0 ? receiver.received : undefined), 15_000, 50);
    const received = Date.now();
    // Against the approval's own deadline: sent once 80 % of the 10 s TTL has passed (2 s before it lapses), before it lapses.
    const expires = Date.parse(JSON.parse(request!.body).data.expires_at as string);
    expect(received).toBeGreaterThanOrEqual(expires - 2_000);
    expect(received).toBeLessThan(expires);
    expect(verifyWebhook(secret, request!.headers, request!.body)).toBe(true);
    const body = JSON.parse(request!.body);
    expect(body).toMatchObject({ type: 'approval.expiring', data: { approval_id: pending.approval_id, kind: 'approval_expiring' } });
    expect(body.data.title).toContain('Approval expiring soon');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.received).toHaveLength(1);
  });
});
