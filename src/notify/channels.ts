// The operator's notification channels as configuration describes them, and what the notifier needs of a channel's
// sender (src/adapters/notify implements it per kind). A channel's `name` is what logs and the API show: it never
// carries a secret, token or password.
import type { Message } from './message.ts';

import type { NotificationKind } from './kinds.ts';

export { NOTIFICATION_KINDS, type NotificationKind } from './kinds.ts';

interface ChannelBase {
  /** Shown in logs and GET /approvals/:id/notifications: the kind and host, or the operator's own name. */
  readonly name: string;
  /** The kinds it gets (all by default). */
  readonly events: readonly NotificationKind[];
}

export interface WebhookChannel extends ChannelBase {
  readonly type: 'webhook';
  readonly url: string;
  /** whsec_ followed by the base64 key (Standard Webhooks). */
  readonly secret: string;
}

export interface NtfyChannel extends ChannelBase {
  readonly type: 'ntfy';
  /** The topic's URL, e.g. https://ntfy.sh/ops-approvals. */
  readonly url: string;
  readonly token: string | null;
}

export interface GotifyChannel extends ChannelBase {
  readonly type: 'gotify';
  /** The server's base URL; messages go to {url}/message. */
  readonly url: string;
  /** The application's token. */
  readonly token: string;
}

export interface SmtpChannel extends ChannelBase {
  readonly type: 'smtp';
  readonly host: string;
  readonly port: number;
  /** smtps: TLS from the start; otherwise STARTTLS when the server offers it. */
  readonly secure: boolean;
  readonly user: string | null;
  readonly password: string | null;
  readonly from: string;
  readonly to: readonly string[];
}

export type Channel = WebhookChannel | NtfyChannel | GotifyChannel | SmtpChannel;

/** The secrets of a channel: kept out of anything recorded or shown (an error text that echoes one included). */
export function secretsOf(channel: Channel): string[] {
  switch (channel.type) {
    case 'webhook':
      return [channel.secret, channel.secret.replace(/^whsec_/, '')];
    case 'ntfy':
      return channel.token === null ? [] : [channel.token];
    case 'gotify':
      return [channel.token];
    case 'smtp':
      return channel.password === null ? [] : [channel.password];
    default: {
      const never: never = channel;
      return never;
    }
  }
}

/** A text with every secret of the channel replaced. */
export function redact(text: string, channel: Channel): string {
  let out = text;
  for (const secret of secretsOf(channel)) if (secret.length > 0) out = out.split(secret).join('***');
  return out;
}

/** What a sender is given: the message, and the identity a receiver dedupes by (stable across retries). */
export interface Envelope {
  /** Stable per event, kind and channel: the webhook-id, the email's Message-ID. */
  readonly id: string;
  /** When this attempt is made. */
  readonly at: Date;
}

/** How an attempt went: `status` is the receiver's HTTP status or SMTP reply code, when one came. */
export interface SendResult {
  readonly ok: boolean;
  readonly status: number | null;
  readonly error: string | null;
}

export interface Sender {
  send(message: Message, envelope: Envelope): Promise<SendResult>;
  close?(): Promise<void>;
}
