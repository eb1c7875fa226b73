// The sender for each kind of channel.
import type { Channel, Sender } from '../../notify/channels.ts';
import { GotifySender } from './gotify.ts';
import { NtfySender } from './ntfy.ts';
import { SmtpSender } from './smtp.ts';
import { WebhookSender } from './webhook.ts';

export function senderFor(channel: Channel): Sender {
  switch (channel.type) {
    case 'webhook':
      return new WebhookSender(channel);
    case 'ntfy':
      return new NtfySender(channel);
    case 'gotify':
      return new GotifySender(channel);
    case 'smtp':
      return new SmtpSender(channel);
    default: {
      const never: never = channel;
      return never;
    }
  }
}
