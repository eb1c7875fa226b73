// An ntfy sender (docs.ntfy.sh/publish): the message as the body of a POST to the topic's URL, with its title,
// priority, tags and click-through link as headers, and the operator's access token as a bearer token.
import type { Envelope, NtfyChannel, SendResult, Sender } from '../../notify/channels.ts';
import type { Message } from '../../notify/message.ts';
import { post } from './http-post.ts';

const PRIORITY = { default: '3', high: '4', urgent: '5' } as const;
const TAGS = { approval_requested: 'warning', approval_expiring: 'hourglass', turn_failed: 'x', execution_hung: 'rotating_light' } as const;

/** A header value: as it is when plain ASCII, else RFC 2047 encoded (which ntfy decodes). */
export function headerText(text: string): string {
  const flat = text.replace(/[\r\n]+/g, ' ');
  return /^[\x20-\x7e]*$/.test(flat) ? flat : `=?UTF-8?B?${Buffer.from(flat, 'utf8').toString('base64')}?=`;
}

export class NtfySender implements Sender {
  constructor(private readonly channel: NtfyChannel) {}

  send(message: Message, _envelope: Envelope): Promise<SendResult> {
    const headers: Record<string, string> = {
      'content-type': 'text/plain; charset=utf-8',
      Title: headerText(message.title),
      Priority: PRIORITY[message.urgency],
      Tags: TAGS[message.kind],
      Click: message.link,
    };
    if (this.channel.token !== null) headers.Authorization = `Bearer ${this.channel.token}`;
    return post(this.channel.url, headers, message.text);
  }
}
