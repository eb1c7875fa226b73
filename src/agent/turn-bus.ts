// The bus of a turn's token deltas: the agent publishes what the model streams, SSE clients of the session
// follow it. Deltas are not stored; a client that reconnects gets the recorded `text` message instead. Shared
// (PostgreSQL), each delta also goes out as a NOTIFY, so clients of every server sharing the database see a
// turn that runs on any of them: NOTIFY rather than a table because deltas are worth something only now, to
// whoever listens now — nothing to keep, clean up or poll for.
import { Observable, Subject } from 'rxjs';
import type { Db } from '../ports/db.ts';

const CHANNEL = 'nomos_tokens';
/** NOTIFY payloads are limited to 8000 bytes: a delta is sent in pieces small enough even when JSON escapes every character. */
const PIECE = 1_000;

interface Delta {
  s: string;
  t: string;
}

/** A delivered() call, and how many queued deltas must have gone out for it to resolve. */
interface Waiter {
  readonly upTo: number;
  readonly resolve: () => void;
}

export class TurnBus {
  readonly #subjects = new Map<string, Subject<string>>();
  #share: { db: Db; origin: string } | null = null;
  #queue: Delta[] = [];
  #sending: Promise<void> | null = null;
  /** Deltas queued for the other servers so far, and how many of them have gone out (or never will). */
  #queued = 0;
  #sent = 0;
  #waiting: Waiter[] = [];

  /** Sends a delta to whoever follows the session right now, here and (shared) on every other server. */
  publish(sessionId: string, text: string): void {
    this.#local(sessionId, text);
    if (this.#share === null) return;
    this.#queue.push({ s: sessionId, t: text });
    this.#queued += 1;
    this.#sending ??= this.#send().finally(() => (this.#sending = null));
  }

  /**
   * Resolves once every delta published so far has gone out to the other servers (at once when not shared). The
   * agent waits for it before it records what follows a model's output: a delta's NOTIFY then commits before the
   * events that end the turn, so another server's clients get the deltas before the `done` that ends their stream.
   */
  delivered(): Promise<void> {
    // Only those published so far: deltas of other turns that keep coming must not hold this one up.
    const upTo = this.#queued;
    if (this.#sent >= upTo) return Promise.resolve();
    return new Promise<void>((resolve) => this.#waiting.push({ upTo, resolve }));
  }

  /** The session's deltas from the moment of subscribing; its subject lives only while someone listens. */
  tokens(sessionId: string): Observable<string> {
    return new Observable<string>((subscriber) => {
      let subject = this.#subjects.get(sessionId);
      if (!subject) {
        subject = new Subject<string>();
        this.#subjects.set(sessionId, subject);
      }
      const own = subject;
      const subscription = own.subscribe(subscriber);
      return () => {
        subscription.unsubscribe();
        if (!own.observed && this.#subjects.get(sessionId) === own) this.#subjects.delete(sessionId);
      };
    });
  }

  /** Whether anyone follows the session here: lets a publisher skip work, and tests check nothing leaked. */
  hasListeners(sessionId: string): boolean {
    return this.#subjects.has(sessionId);
  }

  /** Shares deltas with every server listening on the database (origin names this one); returns how to stop. */
  async share(db: Db, origin: string): Promise<() => Promise<void>> {
    const unlisten = await db.listen(CHANNEL, (payload) => {
      const delta = parse(payload);
      if (delta !== null && delta.o !== origin) this.#local(delta.s, delta.t);
    });
    this.#share = { db, origin };
    return async () => {
      this.#share = null;
      await this.#sending;
      await unlisten();
    };
  }

  #local(sessionId: string, text: string): void {
    this.#subjects.get(sessionId)?.next(text);
  }

  /** One NOTIFY at a time, so deltas arrive in the order they were published; those that queued up meanwhile go together. */
  async #send(): Promise<void> {
    while (this.#queue.length > 0 && this.#share !== null) {
      const { db, origin } = this.#share;
      const taken = this.#queue.splice(0);
      for (const { s, t } of coalesce(taken)) {
        for (let i = 0; i < t.length; ) {
          let j = Math.min(i + PIECE, t.length);
          if (j < t.length && isHighSurrogate(t.charCodeAt(j - 1))) j--; // never split a character in two
          const payload = JSON.stringify({ o: origin, s, t: t.slice(i, j) });
          i = j;
          await db.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]).catch(() => undefined);
        }
      }
      this.#release(this.#sent + taken.length);
    }
    // No longer shared: what is still queued will not go, and nobody waits for it.
    if (this.#share === null) this.#release(this.#queued);
  }

  #release(sent: number): void {
    this.#sent = sent;
    const still: Waiter[] = [];
    for (const waiting of this.#waiting) {
      if (waiting.upTo <= sent) waiting.resolve();
      else still.push(waiting);
    }
    this.#waiting = still;
  }
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

function coalesce(deltas: Delta[]): Delta[] {
  const out: Delta[] = [];
  for (const d of deltas) {
    const last = out.at(-1);
    if (last?.s === d.s) last.t += d.t;
    else out.push({ ...d });
  }
  return out;
}

function parse(payload: string): { o: string; s: string; t: string } | null {
  try {
    const value = JSON.parse(payload) as { o?: unknown; s?: unknown; t?: unknown };
    return typeof value.o === 'string' && typeof value.s === 'string' && typeof value.t === 'string' ? { o: value.o, s: value.s, t: value.t } : null;
  } catch {
    return null;
  }
}
