// A Standard Webhooks sender (standardwebhooks.com): a JSON body {type, timestamp, data} signed with the
// channel's whsec_ secret, with the webhook-id a receiver dedupes by (the same on every retry of one message).
import { Webhook } from 'standardwebhooks';
import type { Envelope, SendResult, Sender, WebhookChannel } from '../../notify/channels.ts';
import type { Message } from '../../notify/message.ts';
import { post } from './http-post.ts';

/** The event types a receiver sees, by kind. */
const TYPES = {
  approval_requested: 'approval.requested',
  approval_expiring: 'approval.expiring',
  turn_failed: 'turn.failed',
  execution_hung: 'execution.hung',
} as const;

export class WebhookSender implements Sender {
  private readonly signer: Webhook;

  constructor(private readonly channel: WebhookChannel) {
    this.signer = new Webhook(channel.secret);
  }

  async send(message: Message, envelope: Envelope): Promise<SendResult> {
    const body = JSON.stringify({ type: TYPES[message.kind], timestamp: message.occurredAt, data: { ...message.data, title: message.title } });
    const timestamp = new Date(Math.floor(envelope.at.getTime() / 1000) * 1000);
    const signature = this.signer.sign(envelope.id, timestamp, body);
    return post(
      this.channel.url,
      {
        'content-type': 'application/json',
        'user-agent': 'nomos-notify',
        'webhook-id': envelope.id,
        'webhook-timestamp': String(timestamp.getTime() / 1000),
        'webhook-signature': signature,
      },
      body,
    );
  }
}
