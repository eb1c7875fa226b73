// The notifier end to end on a real server: an approval asked for is sent to a webhook (its signature checked
// with the Standard Webhooks algorithm, independently of the signing library), to a real SMTP server, to ntfy's
// and Gotify's publish APIs in their documented shape; a receiver that fails first gets it again after a
// backoff, every attempt recorded and shown on the approval.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../src/notify/channels.ts';
import { deliveryId } from '../../src/notify/notifier.ts';
import { databases } from '../support/databases.ts';
import { PENDING_COMMAND, pendingApproval, type Pending } from '../support/pending-approval.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { httpReceiver, smtpServer, verifyWebhook, webhookSecret, type HttpReceiver, type SmtpServer } from './receivers.ts';

const PUBLIC_URL = 'https://nomos.example.org';

describe.each(databases)('notifications ($name)', (database) => {
  let server: TestServer;
  let hook: HttpReceiver;
  let flaky: HttpReceiver;
  let push: HttpReceiver;
  let smtp: SmtpServer;
  let pending: Pending;
  const secret = webhookSecret();
  const flakySecret = webhookSecret();

  beforeAll(async () => {
    [hook, flaky, push, smtp] = await Promise.all([httpReceiver(), httpReceiver(), httpReceiver(), smtpServer()]);
    // The flaky receiver is down for its first request.
    flaky.answer = () => (flaky.received.length === 0 ? 500 : 204);
    const channels: Channel[] = [
      { type: 'webhook', name: 'hook', events: ['approval_requested'], url: `${hook.url}/hooks/nomos`, secret },
      { type: 'webhook', name: 'flaky', events: ['approval_requested'], url: `${flaky.url}/in`, secret: flakySecret },
      { type: 'ntfy', name: 'ntfy', events: ['approval_requested'], url: `${push.url}/ops-approvals`, token: 'tk_ntfy_secret' },
      { type: 'gotify', name: 'gotify', events: ['approval_requested'], url: `${push.url}/gotify`, token: 'AgotifyAppToken' },
      { type: 'smtp', name: 'mail', events: ['approval_requested'], host: '127.0.0.1', port: smtp.port, secure: false, user: null, password: null, from: 'nomos@example.org', to: ['ops@example.org', 'oncall@example.org'] },
    ];
    server = await startTestServer(database, { executor: instantExecutor() });
    server.runtime.startNotifier(server.url, { channels, publicUrl: PUBLIC_URL, pollMs: 100, retryFirstMs: 300, onError: (error) => console.error(error) });
    await until('the notifier in its place', async () => ((await server.runtime.db.query("SELECT 1 FROM reactor_checkpoints WHERE name = 'notify'")).rows.length > 0 ? true : undefined));
    pending = await pendingApproval(server, 'Give the data directory to the service group');
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([hook?.close(), flaky?.close(), push?.close(), smtp?.close()]);
  });

  it('posts a signed Standard Webhooks message saying what, where, why, the rule and the expiry, linking to the console', async () => {
    const [request] = await until('the webhook', () => Promise.resolve(hook.received.length > 0 ? hook.received : undefined));
    expect(request!.url).toBe('/hooks/nomos');
    expect(verifyWebhook(secret, request!.headers, request!.body)).toBe(true);
    // Any other secret or a changed body fails the same check: the check can fail.
    expect(verifyWebhook(webhookSecret(), request!.headers, request!.body)).toBe(false);
    expect(verifyWebhook(secret, request!.headers, request!.body.replace('chown', 'chmod'))).toBe(false);
    const approvalEventId = (await server.runtime.db.query<{ event_key: string }>("SELECT event_key FROM notification_outbox WHERE channel = 'hook'")).rows[0]!.event_key;
    expect(request!.headers['webhook-id']).toBe(deliveryId(approvalEventId, 'approval_requested', 'hook'));
    const body = JSON.parse(request!.body);
    expect(body.type).toBe('approval.requested');
    expect(body.data).toMatchObject({
      approval_id: pending.approval_id,
      command: PENDING_COMMAND,
      target: 'lxc:box',
      risk_class: 'config_mutation',
      goal: 'Give the data directory to the service group',
      link: `${PUBLIC_URL}/#/approvals?approval=${pending.approval_id}`,
    });
    expect(body.data.reason).toEqual(expect.any(String));
    expect(body.data.rule_id).toEqual(expect.any(String));
    expect(body.data.expires_at).toEqual(expect.any(String));
    expect(body.data.title).toContain('Approval needed');
  });

  it('retries a receiver that failed, with the same id, and records both attempts on the approval', async () => {
    await until('the second attempt', () => Promise.resolve(flaky.received.length >= 2 ? true : undefined));
    expect(flaky.received.map((r) => r.status)).toEqual([500, 204]);
    expect(flaky.received[0]!.headers['webhook-id']).toBe(flaky.received[1]!.headers['webhook-id']);
    expect(verifyWebhook(flakySecret, flaky.received[1]!.headers, flaky.received[1]!.body)).toBe(true);
    // The receiver answers before the attempt is recorded: wait for the record.
    const attempts = await until('both attempts recorded', async () => {
      const { rows } = await server.runtime.db.query<{ attempt: number; ok: boolean; status_code: number | null; error: string | null }>(
        "SELECT attempt, ok, status_code, error FROM notification_attempts WHERE channel = 'flaky' ORDER BY attempt",
      );
      return rows.length >= 2 ? rows : undefined;
    });
    expect(attempts).toMatchObject([{ attempt: 1, ok: false, status_code: 500 }, { attempt: 2, ok: true, status_code: 204, error: null }]);
    expect(attempts[0]!.error).toContain('HTTP 500');
    const answer = await server.request('GET', `/approvals/${pending.approval_id}/notifications`);
    expect(answer.status).toBe(200);
    const flakyState = answer.body.notifications.find((n: { channel: string }) => n.channel === 'flaky');
    expect(flakyState).toMatchObject({ kind: 'approval_requested', status: 'delivered', attempts: 2, last_error: null });
    expect(flakyState.delivered_at).toEqual(expect.any(String));
  });

  it('sends a mail through a real SMTP server', async () => {
    const mails = await until('the mail', async () => {
      const m = await smtp.mails();
      return m.length > 0 ? m : undefined;
    });
    expect(mails).toHaveLength(1);
    expect(mails[0]!.from).toBe('nomos@example.org');
    expect(mails[0]!.to.sort()).toEqual(['oncall@example.org', 'ops@example.org']);
    // The body is quoted-printable: soft line breaks joined, =XX decoded.
    const text = mails[0]!.data.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    expect(text).toMatch(/^Subject: Approval needed: config_mutation on lxc:box/m);
    expect(text).toContain(`Command: ${PENDING_COMMAND}`);
    expect(text).toContain('Expires: ');
    expect(text).toContain(`${PUBLIC_URL}/#/approvals?approval=${pending.approval_id}`);
    expect(text).toContain('this message cannot approve');
  });

  it("publishes to ntfy and Gotify in their APIs' shape", async () => {
    await until('both pushes', () => Promise.resolve(push.received.length >= 2 ? true : undefined));
    const ntfy = push.received.find((r) => r.url === '/ops-approvals')!;
    expect(ntfy.method).toBe('POST');
    expect(ntfy.headers.authorization).toBe('Bearer tk_ntfy_secret');
    expect(ntfy.headers.title).toContain('Approval needed: config_mutation on lxc:box');
    expect(ntfy.headers.priority).toBe('4');
    expect(ntfy.headers.tags).toBe('warning');
    expect(ntfy.headers.click).toBe(`${PUBLIC_URL}/#/approvals?approval=${pending.approval_id}`);
    expect(ntfy.body).toContain(`Command: ${PENDING_COMMAND}`);
    const gotify = push.received.find((r) => r.url.startsWith('/gotify/message'))!;
    expect(gotify.method).toBe('POST');
    expect(gotify.headers['x-gotify-key']).toBe('AgotifyAppToken');
    expect(gotify.headers['content-type']).toContain('application/json');
    const message = JSON.parse(gotify.body);
    expect(message).toMatchObject({ priority: 8, extras: { 'client::notification': { click: { url: `${PUBLIC_URL}/#/approvals?approval=${pending.approval_id}` } } } });
    expect(message.title).toContain('Approval needed');
    expect(message.message).toContain('Target: lxc:box');
  });

  it('answers 404 for an approval that does not exist, 400 for a bad id', async () => {
    expect((await server.request('GET', `/approvals/${crypto.randomUUID()}/notifications`)).status).toBe(404);
    const bad = await server.request('GET', '/approvals/nope/notifications');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain('UUID');
  });
});
