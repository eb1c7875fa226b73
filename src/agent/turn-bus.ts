// The in-process bus of a turn's token deltas: the agent publishes what the model streams, SSE clients of the
// session follow it. Deltas are not stored; a client that reconnects gets the recorded `text` message instead.
import { Observable, Subject } from 'rxjs';

export class TurnBus {
  readonly #subjects = new Map<string, Subject<string>>();

  /** Sends a delta to whoever follows the session right now; nobody listening means it is dropped. */
  publish(sessionId: string, text: string): void {
    this.#subjects.get(sessionId)?.next(text);
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

  /** Whether anyone follows the session: lets a publisher skip work, and tests check nothing leaked. */
  hasListeners(sessionId: string): boolean {
    return this.#subjects.has(sessionId);
  }
}
