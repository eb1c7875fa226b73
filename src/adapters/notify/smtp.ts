// An email sender over SMTP (nodemailer): the message as a plain-text mail to the channel's addresses, its
// Message-ID stable per event and channel so that a mail resent after a lost answer threads with the first.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Envelope, SendResult, Sender, SmtpChannel } from '../../notify/channels.ts';
import type { Message } from '../../notify/message.ts';
import { SEND_TIMEOUT_MS } from './http-post.ts';

export class SmtpSender implements Sender {
  private readonly transport: Transporter;

  constructor(private readonly channel: SmtpChannel) {
    this.transport = nodemailer.createTransport({
      host: channel.host,
      port: channel.port,
      secure: channel.secure,
      ...(channel.user !== null && channel.password !== null && { auth: { user: channel.user, pass: channel.password } }),
      connectionTimeout: SEND_TIMEOUT_MS,
      greetingTimeout: SEND_TIMEOUT_MS,
      socketTimeout: SEND_TIMEOUT_MS,
    });
  }

  async send(message: Message, envelope: Envelope): Promise<SendResult> {
    try {
      const info = await this.transport.sendMail({
        from: this.channel.from,
        to: [...this.channel.to],
        subject: message.title,
        text: message.text,
        messageId: `<${envelope.id}@nomos>`,
        headers: { 'X-Nomos-Kind': message.kind },
      });
      return { ok: true, status: replyCode(info.response) ?? 250, error: null };
    } catch (error) {
      const e = error as { responseCode?: number; code?: string; message?: string };
      return { ok: false, status: e.responseCode ?? null, error: `${e.code ?? 'error'}: ${(e.message ?? String(error)).slice(0, 300)}` };
    }
  }

  close(): Promise<void> {
    this.transport.close();
    return Promise.resolve();
  }
}

function replyCode(response: unknown): number | null {
  const code = typeof response === 'string' ? /^(\d{3})/.exec(response)?.[1] : undefined;
  return code === undefined ? null : Number(code);
}
