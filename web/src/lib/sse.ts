// Server-Sent Events over fetch, so the token travels in a header (EventSource cannot send one). A stream cut by
// the network is resumed with Last-Event-ID = the last id seen: the server replays from there, so nothing is lost
// or shown twice. A first request that posts something (POST /chat) is never repeated; later attempts GET `resume`.
import { createParser } from 'eventsource-parser';
import { ApiError, headers } from './api.ts';
import { auth } from './auth.svelte.ts';

export type StreamState = 'connecting' | 'open' | 'retrying' | 'closed';

export interface FollowOptions {
  /** The request that starts the stream, when it is not a plain GET of `resume` (POST /chat). */
  first?: { method: 'POST'; path: string; body: unknown };
  /** Where to (re)connect; called with the last id seen. null: nothing to resume from, give up. */
  resume: (lastId: number | null) => string | null;
  lastEventId?: number | null;
  onMessage(data: unknown, id: number | null): void;
  onState?(state: StreamState, detail?: string): void;
  /** Asked when a response ends: true means the stream ended as it should (a turn's done), no reconnect. */
  finished?(): boolean;
}

export interface Following {
  close(): void;
  /** Resolves when the stream is over for good (finished, closed, or refused). */
  readonly done: Promise<void>;
  lastEventId(): number | null;
}

const BACKOFF_MS = [250, 500, 1_000, 2_000, 5_000];

export function follow(options: FollowOptions): Following {
  const abort = new AbortController();
  let lastId = options.lastEventId ?? null;
  let closed = false;
  /** Whether the last attempt got through: a stream that was open starts its back-off again from the shortest pause. */
  let opened = false;
  const state = (s: StreamState, detail?: string) => options.onState?.(s, detail);

  const once = async (first: boolean): Promise<'ended' | 'cut'> => {
    let res: Response;
    const posting = first && options.first !== undefined;
    const url = posting ? null : options.resume(lastId);
    if (!posting && url === null) throw new ApiError(0, 'cannot_resume', 'the stream was cut before it named anything to resume from', null);
    try {
      res =
        posting && options.first
          ? await fetch(options.first.path, { method: 'POST', headers: headers({ 'content-type': 'application/json', accept: 'text/event-stream' }), body: JSON.stringify(options.first.body), signal: abort.signal })
          : await fetch(url ?? '', {
              headers: headers({ accept: 'text/event-stream', ...(lastId !== null && { 'last-event-id': String(lastId) }) }),
              signal: abort.signal,
            });
    } catch (error) {
      if (abort.signal.aborted) return 'ended';
      // Nothing reached the server, or its answer never came: a POST may have been taken, so it is not repeated.
      if (posting) throw new ApiError(0, 'unreachable', `the server did not answer (${error instanceof Error ? error.message : String(error)})`, null);
      return 'cut';
    }
    if (!res.ok || !res.body) {
      const text = await res.text().catch(() => '');
      let p: { code?: string; detail?: string } = {};
      try {
        p = JSON.parse(text) as typeof p;
      } catch {
        // not problem+json
      }
      if (res.status === 401) auth.unauthenticated(p.detail ?? 'sign in');
      // 5xx (a server going down, a proxy) is worth another try; a 4xx will answer the same again.
      if (res.status >= 500 && !posting) return 'cut';
      throw new ApiError(res.status, p.code ?? `http_${res.status}`, p.detail ?? res.statusText, p);
    }
    state('open');
    opened = true;
    const parser = createParser({
      onEvent(event) {
        if (event.id !== undefined && /^\d+$/.test(event.id)) lastId = Number(event.id);
        let data: unknown;
        try {
          data = JSON.parse(event.data);
        } catch {
          return;
        }
        options.onMessage(data, event.id !== undefined && /^\d+$/.test(event.id) ? Number(event.id) : null);
      },
    });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch {
      if (abort.signal.aborted) return 'ended';
      return 'cut';
    }
    return 'cut';
  };

  const run = async () => {
    let attempt = 0;
    let first = true;
    while (!closed) {
      state(attempt === 0 ? 'connecting' : 'retrying');
      opened = false;
      const how = await once(first);
      first = false;
      if (closed || how === 'ended' || options.finished?.()) break;
      if (opened) attempt = 0;
      // The response ended or broke before its end: resume after a pause that grows while it keeps failing.
      const pause = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)] ?? 5_000;
      attempt += 1;
      state('retrying', `connection lost; resuming in ${Math.round(pause / 100) / 10} s`);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  };

  const done = run()
    .then(() => state('closed'))
    .catch((error: unknown) => {
      state('closed', error instanceof Error ? error.message : String(error));
      throw error;
    });
  done.catch(() => undefined);
  return {
    close() {
      closed = true;
      abort.abort();
    },
    done,
    lastEventId: () => lastId,
  };
}
