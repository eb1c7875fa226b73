// Server-Sent Events for chat clients: the raw event stream on a hijacked reply, and a session's turn events
// on it — replayed after a position, then followed live with the turn's token deltas — for any route to reuse.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpProblem } from './errors.ts';
import { type ChatMessage, toChatMessage } from '../agent/chat-messages.ts';
import type { TurnBus } from '../agent/turn-bus.ts';
import type { EventStore } from '../ports/event-store.ts';
import { sessionStream } from '../domain/session/stream.ts';

/** Proxies drop a connection that stays silent too long; a comment line every so often keeps it open. */
export const KEEP_ALIVE_MS = 15_000;

export interface Sse {
  send(message: ChatMessage): void;
  /** One message of any shape, with an id to resume from (none: null). */
  data(id: number | null, payload: unknown): void;
  comment(text: string): void;
  /** Ends the response; sending afterwards does nothing. */
  close(): void;
  /** Resolves once the response is over, closed by either side. */
  readonly closed: Promise<void>;
}

/** NOMOS_MAX_STREAMS' default: a console holds two (the session's and /changes), a few tabs a dozen. */
export const DEFAULT_MAX_STREAMS = 32;

/** Per HTTP server: how many long-lived streams one principal may hold open, and how many each holds. */
const streamCaps = new WeakMap<object, { readonly max: number; readonly open: Map<string, number> }>();

/** Sets the cap of open streams per principal on the app's HTTP server (buildApp does). */
export function capStreams(app: FastifyInstance, max: number): void {
  streamCaps.set(app.server, { max, open: new Map() });
}

/**
 * Counts one more open stream for the request's principal — its token's name, or with auth off its address —
 * or refuses it (429 too_many_streams, naming the cap) when it already holds the cap. Call before the stream
 * opens; call what it returns once the stream is over, to give the place back.
 */
export function claimStream(request: FastifyRequest): () => void {
  const cap = streamCaps.get(request.server.server);
  if (!cap) return () => undefined;
  const who = request.server.nomos.tokens.length > 0 ? `token ${request.principal.name}` : `address ${request.ip}`;
  const held = cap.open.get(who) ?? 0;
  if (held >= cap.max) {
    throw new HttpProblem(429, 'too_many_streams', `${who} already holds ${held} open event streams, the most one caller may (NOMOS_MAX_STREAMS=${cap.max}); close one first`, {
      max_streams: cap.max,
    });
  }
  cap.open.set(who, held + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const now = (cap.open.get(who) ?? 1) - 1;
    if (now <= 0) cap.open.delete(who);
    else cap.open.set(who, now);
  };
}

/** The streams open on each HTTP server, so that closing the server can end them (it would wait on them forever). */
const openStreams = new WeakMap<object, Set<Sse>>();

/** Takes the response over from Fastify and starts an event stream on it; problems must be answered before. */
export function openSse(reply: FastifyReply, options: { keepAliveMs?: number } = {}): Sse {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  res.flushHeaders();

  const write = (chunk: string) => {
    if (!res.writableEnded && !res.destroyed) res.write(chunk);
  };
  const sse: Sse = {
    send(message) {
      sse.data(message.id, { type: message.type, session_id: message.session_id, data: message.data });
    },
    data(id, payload) {
      // JSON escapes line breaks, so the payload is always a single data line.
      write(`${id === null ? '' : `id: ${id}\n`}data: ${JSON.stringify(payload)}\n\n`);
    },
    comment(text) {
      write(`: ${text.replace(/[\r\n]+/g, ' ')}\n\n`);
    },
    close() {
      if (!res.writableEnded && !res.destroyed) res.end();
    },
    closed: new Promise<void>((resolve) => res.once('close', resolve)),
  };
  // A write racing the client's disconnect must not crash the process.
  res.on('error', () => undefined);

  const server = reply.server.server;
  const streams = openStreams.get(server) ?? new Set<Sse>();
  openStreams.set(server, streams);
  streams.add(sse);
  const keepAlive = setInterval(() => sse.comment('keep-alive'), options.keepAliveMs ?? KEEP_ALIVE_MS);
  void sse.closed.then(() => {
    clearInterval(keepAlive);
    streams.delete(sse);
  });
  return sse;
}

/** Ends every event stream open on the app's HTTP server: call it before the server closes (preClose). */
export function closeSseStreams(app: FastifyInstance): void {
  for (const sse of openStreams.get(app.server) ?? []) sse.close();
}

/** How many events one read of a followed session takes: a stream behind by more reads again at once. */
export const SSE_READ_PAGE = 500;

/**
 * The stream position of the first event of `streamName` after global position `after` (version + 1 when there
 * is none), found by bisection over one-event reads: positions grow along a stream, and a resuming client must
 * not cost a read of the whole session.
 */
export async function streamPositionAfter(store: EventStore, streamName: string, after: number, version: number): Promise<number> {
  let low = 0;
  let high = version + 1;
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    const [event] = (await store.readStream(streamName, { from: mid, max: 1 })).events;
    if (event === undefined || event.position > after) high = mid;
    else low = mid + 1;
  }
  return low;
}

/**
 * Sends the session's messages for events from stream position `from` (the global position `after` being the last
 * one the client has), then follows the stream live (and the bus's
 * token deltas) until the client leaves or, with untilDone, a `done` was sent; then ends the event stream.
 * Each message goes out once and in stream order: positions grow along one stream, so "after the last one
 * sent" is exact. Rejects (the stream ended all the same) if the event store fails: the client resumes.
 */
export async function streamSession(deps: { store: EventStore; bus: TurnBus }, sessionId: string, sse: Sse, options: { after: number; from?: number; untilDone: boolean }): Promise<void> {
  const stream = sessionStream(sessionId);
  const state = { dirty: true, gone: false, reading: false, failure: null as { error: unknown } | null };
  let wake: (() => void) | null = null;
  const poke = () => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  const token = (text: string) => sse.send({ id: null, type: 'token', session_id: sessionId, data: { text } });
  // Deltas that arrive while a read is in flight wait for it, so they follow the stored messages before them.
  const held: string[] = [];

  // Listen before the first read, so that nothing appended in between goes unnoticed; only to this session.
  const changes = deps.store.streamChanges(stream).subscribe({
    next: () => {
      state.dirty = true;
      poke();
    },
    error: (error: unknown) => {
      state.failure = { error };
      poke();
    },
  });
  const tokens = deps.bus.tokens(sessionId).subscribe((text) => (state.reading ? held.push(text) : token(text)));
  void sse.closed.then(() => {
    state.gone = true;
    poke();
  });

  let last = options.after;
  let next = options.from ?? (await streamPositionAfter(deps.store, stream, options.after, (await deps.store.readStream(stream, { from: 0, max: 0 })).version));
  try {
    for (;;) {
      if (state.gone) return;
      if (state.failure) throw state.failure.error;
      if (!state.dirty) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      state.dirty = false;
      state.reading = true;
      // Only what follows the last event read, a page at a time: a long session is never read whole.
      const { events } = await deps.store.readStream(stream, { from: next, max: SSE_READ_PAGE });
      if (events.length === SSE_READ_PAGE) state.dirty = true;
      for (const event of events) {
        next = event.streamPosition + 1;
        if (event.position <= last) continue;
        last = event.position;
        const message = toChatMessage(sessionId, event);
        if (!message) continue;
        sse.send(message);
        if (options.untilDone && message.type === 'done') return;
      }
      state.reading = false;
      for (const text of held.splice(0)) token(text);
    }
  } finally {
    changes.unsubscribe();
    tokens.unsubscribe();
    sse.close();
  }
}
