// Read-your-writes by default: a 2xx answer to a write (a command, a DELETE) is sent once every read model
// holds what it wrote, so the very next read shows it without min_position. The wait is bounded by
// NOMOS_READ_WAIT_MS; past it the answer goes out anyway and says so. A client that does not need it sends
// `Prefer: respond-async` (RFC 7240) and is answered as soon as the events are stored.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

export const READ_WAIT_HEADER = 'x-nomos-read-wait';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether the request's Prefer header asks for respond-async (a token among others, parameters or not). */
export function prefersAsync(request: FastifyRequest): boolean {
  const prefer = request.headers.prefer;
  const values = Array.isArray(prefer) ? prefer : prefer === undefined ? [] : [prefer];
  return values.some((value) => value.split(',').some((part) => part.split(';')[0]!.trim().toLowerCase() === 'respond-async'));
}

/** The position a write's answer reports, when it wrote something. */
function writtenPosition(request: FastifyRequest, reply: FastifyReply, payload: unknown): number | null {
  if (!WRITES.has(request.method) || reply.statusCode < 200 || reply.statusCode >= 300) return null;
  if (request.routeOptions.config.public === true) return null;
  if (typeof payload !== 'object' || payload === null) return null;
  const { position } = payload as { position?: unknown };
  return typeof position === 'number' && Number.isSafeInteger(position) && position > 0 ? position : null;
}

export const readYourWrites = fp(
  (app: FastifyInstance, _options: object, done: (error?: Error) => void) => {
    app.addHook('preSerialization', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const position = writtenPosition(request, reply, payload);
      if (position === null) return payload;
      if (prefersAsync(request)) {
        void reply.header('preference-applied', 'respond-async').header(READ_WAIT_HEADER, 'skipped');
        return payload;
      }
      const reached = await app.nomos.runtime.readWait.until(position, app.nomos.readWaitMs);
      void reply.header(READ_WAIT_HEADER, reached ? 'reached' : 'timed-out');
      return payload;
    });
    done();
  },
  { name: 'nomos-read-your-writes', dependencies: ['nomos-context'] },
);
