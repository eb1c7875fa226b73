// One chat page's connection to its session: the history from the stored events, then one stream at a time —
// a POST /chat while a message is sent, otherwise GET /sessions/:id/stream followed live — each resumed with
// Last-Event-ID when cut. Messages at or below the last id seen are dropped, so a replay never shows twice.
import { ApiError, getAllPages, post, describe } from '../../lib/api.ts';
import { follow, type Following, type StreamState } from '../../lib/sse.ts';
import type { ChatStreamMessage, StoredEventView } from '../../lib/types.ts';
import { Transcript, fromEvent } from './transcript.svelte.ts';

export class ChatController {
  sessionId = $state<string | null>(null);
  transcript = $state(new Transcript());
  /** The stream being followed; 'retrying' is shown as reconnecting. */
  stream = $state<StreamState | 'idle'>('idle');
  streamDetail = $state<string | null>(null);
  loading = $state(false);
  sending = $state(false);
  /** A refusal or failure of the last action, with the server's detail. */
  problem = $state<string | null>(null);
  notice = $state<string | null>(null);
  #following: Following | null = null;
  #tag: symbol | null = null;
  #lastId: number | null = null;
  /** The position of the last stored message shown, for reads that must include it (min_position). */
  seenPosition = $state<number | null>(null);
  #closed = false;
  /** Messages received so far, and whether the turn a POST /chat started has sent its done. */
  #received = 0;
  #turnDone = false;
  /** Called with a session id once a new chat learns it. */
  onsession: ((id: string) => void) | null = null;

  async open(sessionId: string): Promise<void> {
    this.sessionId = sessionId;
    this.loading = true;
    try {
      const events = await getAllPages<{ events: StoredEventView[] }, StoredEventView>(`/sessions/${encodeURIComponent(sessionId)}/events`, (page) => page.events);
      const fresh = new Transcript();
      for (const event of events) {
        const input = fromEvent(sessionId, event);
        if (input) fresh.apply(input);
      }
      this.transcript = fresh;
      this.#lastId = events.at(-1)?.position ?? null;
      this.seenPosition = this.#lastId;
    } catch (error) {
      this.problem = describe(error);
      return;
    } finally {
      this.loading = false;
    }
    this.#watch();
  }

  /** Follows the session live, from the last id seen: the agent's continuations arrive here. */
  #watch(): void {
    const id = this.sessionId;
    if (this.#closed || id === null) return;
    this.#follow({ resume: () => `/sessions/${encodeURIComponent(id)}/stream` });
  }

  #follow(options: { first?: { method: 'POST'; path: string; body: unknown }; resume: (lastId: number | null) => string | null; finished?: () => boolean }): Following {
    this.#following?.close();
    // follow() reports its first state before it returns: states are told apart by this stream's own tag.
    const tag = Symbol('stream');
    this.#tag = tag;
    const following = follow({
      ...options,
      lastEventId: this.#lastId,
      onMessage: (data, id) => this.#receive(data as ChatStreamMessage, id),
      onState: (state, detail) => {
        if (this.#tag !== tag) return;
        this.stream = state;
        this.streamDetail = detail ?? null;
      },
    });
    this.#following = following;
    return following;
  }

  #receive(message: ChatStreamMessage, id: number | null): void {
    if (id !== null) {
      if (this.#lastId !== null && id <= this.#lastId) return;
      this.#lastId = id;
      this.seenPosition = id;
    }
    if (this.sessionId === null && typeof message.session_id === 'string') {
      this.sessionId = message.session_id;
      this.onsession?.(message.session_id);
    }
    this.#received += 1;
    if (message.type === 'done') this.#turnDone = true;
    this.transcript.apply(message);
  }

  /** Sends a message (starting the session when there is none); false when the server refused it. */
  async send(text: string): Promise<boolean> {
    this.problem = null;
    this.notice = null;
    this.sending = true;
    const shown = this.transcript.addUser(text, true);
    const wasRunning = this.transcript.running;
    this.transcript.running = true;
    this.#turnDone = false;
    const received = this.#received;
    const following = this.#follow({
      first: { method: 'POST', path: '/chat', body: { message: text, ...(this.sessionId && { session_id: this.sessionId }) } },
      // A cut before any stored message: replay the whole new session (ids dedupe what was seen already).
      resume: (lastId) => (this.sessionId ? `/sessions/${encodeURIComponent(this.sessionId)}/stream?until=done${lastId === null ? '&after=0' : ''}` : null),
      finished: () => this.#turnDone,
    });
    let accepted = true;
    try {
      await following.done;
    } catch (error) {
      // Refused before anything streamed (409 turn_running, 503 no_model_provider): nothing was recorded.
      accepted = this.#received !== received;
      if (!accepted) {
        this.transcript.drop(shown);
        // turn_running: the server says a turn runs even when this page has not seen it start.
        this.transcript.running = wasRunning || (error instanceof ApiError && error.code === 'turn_running');
      }
      this.problem = describe(error);
    } finally {
      this.sending = false;
    }
    if (accepted) shown.tentative = false;
    if (this.#following === following) this.#watch();
    return accepted;
  }

  async cancel(): Promise<void> {
    await this.#act(`/sessions/${this.sessionId}/cancel`, 'cancel requested: the agent stops between tool calls');
  }

  /** A new turn by hand; the live stream shows it as it goes. */
  async continue(): Promise<void> {
    if (await this.#act(`/sessions/${this.sessionId}/continue`, null)) this.transcript.running = true;
  }

  async #act(path: string, notice: string | null): Promise<boolean> {
    this.problem = null;
    this.notice = null;
    try {
      await post(path);
      this.notice = notice;
      return true;
    } catch (error) {
      this.problem = describe(error);
      return false;
    }
  }

  close(): void {
    this.#closed = true;
    this.#tag = null;
    this.#following?.close();
    this.#following = null;
  }
}
