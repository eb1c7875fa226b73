// A Gotify sender (gotify.net/docs/pushmsg): POST {server}/message with the application's token in X-Gotify-Key,
// and the console's page as the notification's click-through (extras client::notification).
import type { Envelope, GotifyChannel, SendResult, Sender } from '../../notify/channels.ts';
import type { Message } from '../../notify/message.ts';
import { post } from './http-post.ts';

const PRIORITY = { default: 5, high: 8, urgent: 9 } as const;

export class GotifySender implements Sender {
  constructor(private readonly channel: GotifyChannel) {}

  send(message: Message, _envelope: Envelope): Promise<SendResult> {
    const url = `${this.channel.url.replace(/\/+$/, '')}/message`;
    const body = JSON.stringify({
      title: message.title,
      message: message.text,
      priority: PRIORITY[message.urgency],
      extras: { 'client::display': { contentType: 'text/plain' }, 'client::notification': { click: { url: message.link } } },
    });
    return post(url, { 'content-type': 'application/json', 'X-Gotify-Key': this.channel.token }, body);
  }
}
