// The server's request log: one line a request, when it is answered, with what was asked (method, url, from
// where), the status and the time it took. Fastify's default is two lines, one as the request arrives and one as
// it is answered, each written to stdout synchronously on the event loop every command shares. The arrival line
// is kept at debug level (a request that never ends, an event stream, shows there); Fastify's other lines (a
// stream's error, an unknown route) are its own.
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

export class AccessLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}
