// close() lets the requests being answered finish before it ends every connection (forceCloseConnections),
// so a shutdown does not cut a reply short; event streams, which never finish, are ended first.
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { closeSseStreams } from './sse.ts';

export function drainOnClose(app: FastifyInstance): void {
  const answering = new Set<ServerResponse>();
  let drained: (() => void) | null = null;
  app.addHook('onRequest', (_request, reply, done) => {
    const res = reply.raw;
    answering.add(res);
    res.once('close', () => {
      answering.delete(res);
      if (answering.size === 0) drained?.();
    });
    done();
  });
  // Requests that arrive from now on get Fastify's 503 before any hook, so the set only shrinks.
  app.addHook('preClose', (done) => {
    closeSseStreams(app);
    if (answering.size === 0) {
      done();
      return;
    }
    drained = () => {
      drained = null;
      done();
    };
  });
}
