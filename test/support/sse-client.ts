// A small Server-Sent Events client for API tests: parses the wire format as the spec does (fields, comments,
// blank-line dispatch), records each message's own id, and can be cut off at any point. It speaks node:http
// on a socket of its own rather than fetch, whose pool may open a spare connection after an abort that
// then holds a closing server open.
import { type IncomingHttpHeaders, type IncomingMessage, type ClientRequest, request } from 'node:http';

export interface SseMessage {
  /** The `id:` field of this message, or null when it had none (token deltas). */
  readonly id: string | null;
  readonly data: any;
}

export class SseClient {
  readonly messages: SseMessage[] = [];
  readonly comments: string[] = [];
  /** The id an EventSource would resume from: the last id seen, kept across messages without one. */
  lastEventId: string | null = null;
  /** Resolves when the server ends the response (or the client aborts). */
  readonly ended: Promise<void>;
  #waiters: (() => void)[] = [];
  #done = false;

  #aborted = false;

  private constructor(
    private readonly req: ClientRequest,
    private readonly res: IncomingMessage,
  ) {
    this.ended = this.#read();
  }

  static connect(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const req = request(url, { agent: false, headers: { accept: 'text/event-stream', ...headers } }, (res) => resolve(new SseClient(req, res)));
      req.on('error', reject);
      req.end();
    });
  }

  get status(): number {
    return this.res.statusCode ?? 0;
  }

  get headers(): IncomingHttpHeaders {
    return this.res.headers;
  }

  get done(): boolean {
    return this.#done;
  }

  /** Waits until `predicate` holds over the messages received so far. */
  async waitFor(what: string, predicate: (messages: readonly SseMessage[]) => boolean, ms = 10_000): Promise<SseMessage[]> {
    const deadline = Date.now() + ms;
    while (!predicate(this.messages)) {
      if (this.#done) throw new Error(`stream ended before ${what}; got ${JSON.stringify(this.messages)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.messages;
  }

  /** Cuts the connection, as a client losing its network does. */
  async abort(): Promise<void> {
    this.#aborted = true;
    this.req.destroy();
    await this.ended;
  }

  #notify(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }

  async #read(): Promise<void> {
    let buffer = '';
    let id: string | null = null;
    let data: string[] = [];
    const line = (text: string) => {
      if (text === '') {
        if (data.length > 0) {
          if (id !== null) this.lastEventId = id;
          this.messages.push({ id, data: JSON.parse(data.join('\n')) });
          this.#notify();
        }
        id = null;
        data = [];
        return;
      }
      if (text.startsWith(':')) {
        this.comments.push(text.slice(1).trim());
        this.#notify();
        return;
      }
      const colon = text.indexOf(':');
      const field = colon === -1 ? text : text.slice(0, colon);
      const value = colon === -1 ? '' : text.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
      else throw new Error(`unexpected SSE field ${field}`);
    };
    this.res.setEncoding('utf8');
    try {
      for await (const chunk of this.res) {
        buffer += chunk as string;
        const lines = buffer.split(/\r\n|\r|\n/);
        buffer = lines.pop() ?? '';
        lines.forEach(line);
      }
    } catch (error) {
      if (!this.#aborted) throw error;
    } finally {
      this.#done = true;
      this.#notify();
    }
  }
}
