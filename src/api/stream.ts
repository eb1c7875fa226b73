// GET /sessions/:id/stream: a session's turn events as Server-Sent Events, resumable from the last id a client
// saw (Last-Event-ID or ?after=N), live from now by default, optionally until the next turn is done.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TurnBus } from '../agent/turn-bus.ts';
import { sessionStream } from '../domain/session/stream.ts';
import { HttpProblem } from './errors.ts';
import { CALLER, STREAMS, eventStream, notFound } from './responses.ts';
import { claimStream, closeSseStreams, openSse, streamPositionAfter, streamSession } from './sse.ts';

/** A global position as text: digits only, so `after=`, `-1`, `1e3` or `1.5` are refused rather than coerced. */
const Position = z
  .string()
  .regex(/^\d{1,15}$/, 'must be a non-negative integer (an event position)')
  .transform(Number);

const StreamParams = z.strictObject({ id: z.uuid({ error: 'session id must be a UUID' }) });
const StreamQuery = z.strictObject({
  after: Position.optional(),
  /** `done`: end the stream after the next turn's done message, as a chat request does. */
  until: z.enum(['done']).optional(),
});

const STREAM_SCHEMA = {
  summary: "Follow a session's turn events",
  tags: ['chat'],
  description: 'Replayed after a position (Last-Event-ID, or ?after=N), then live; live from now by default. until=done ends it after the next turn is done.',
  params: StreamParams,
  querystring: StreamQuery,
  response: { 200: eventStream('Turn events, each `data:` a JSON message with an `id:` to resume from'), ...CALLER, ...STREAMS, ...notFound('No such session (session_not_found)') },
};

/** The session stream's routes, following token deltas on `bus`. */
export function streamApi(bus: TurnBus): FastifyPluginCallbackZod {
  return (app, _options, done) => {
    const { store } = app.nomos.runtime;
    // Open streams would hold the server open forever: end them when it closes; clients resume elsewhere.
    app.addHook('preClose', (next) => {
      closeSseStreams(app);
      next();
    });

    // Any role may read a session; auth already ran in onRequest.
    // No HEAD twin: it would hold a connection open with nothing to say.
    app.get('/sessions/:id/stream', { exposeHeadRoute: false, schema: STREAM_SCHEMA }, async (request, reply) => {
      const { id } = request.params;
      const lastEventId = resumePoint(request.headers['last-event-id']);
      const stream = sessionStream(id);
      // The version alone: no event is read to learn where the client starts.
      const { version } = await store.readStream(stream, { from: 0, max: 0 });
      if (version === -1) throw new HttpProblem(404, 'session_not_found', `no session ${id}`);
      // A reconnecting EventSource repeats the URL it started with: the id it last saw wins over ?after.
      const resume = lastEventId ?? request.query.after;
      const release = claimStream(request);
      try {
        const start = resume === undefined ? { after: 0, from: version + 1 } : { after: resume, from: await streamPositionAfter(store, stream, resume, version) };
        await streamSession({ store, bus }, id, openSse(reply), { ...start, untilDone: request.query.until === 'done' }).catch((error: unknown) => {
          // The response already is an event stream, ended now: the client resumes from the last id it saw.
          request.log.error({ err: error }, 'session stream failed');
        });
      } finally {
        release();
      }
    });

    done();
  };
}


function resumePoint(header: string | string[] | undefined): number | undefined {
  // An empty id is how the SSE spec says "none".
  if (header === undefined || header === '') return undefined;
  const parsed = Position.safeParse(header);
  if (!parsed.success) throw new HttpProblem(400, 'invalid_last_event_id', 'Last-Event-ID must be the id of a message this stream sent (a non-negative integer)');
  return parsed.data;
}
