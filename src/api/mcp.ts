// POST /mcp: the MCP Streamable HTTP transport (the official SDK's, in its stateless form) on the API's bearer
// tokens. Each request gets its own MCP server object; the session a client was given at its handshake lives in
// the database (src/mcp/sessions.ts), so any `nomos serve` sharing it answers any request of any client, and
// answers come as JSON (no stream held open on one server). GET (a server-to-client stream) is not offered: 405,
// as the transport's specification allows. DELETE ends the client's session, and closes the Nomos session it
// opened as abandoned (by the system actor, unless the agent completed it; src/commands/close-abandoned.ts). The
// transport closing after each answer ends nothing: in this stateless form it is no more than one request's end. With auth off, a client is
// recorded as `agent:<its clientInfo name>` (src/mcp/client-actor.ts): never as the operator.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Client } from '../domain/messages.ts';
import { closeAbandoned } from '../commands/close-abandoned.ts';
import { type McpPrincipal, type McpSession, McpSessions } from '../mcp/sessions.ts';
import { authenticate } from './auth.ts';
import { agentFor } from '../mcp/client-actor.ts';
import { ownOrigins } from './hosts.ts';
import { HttpProblem } from './errors.ts';

const SESSION_HEADER = 'mcp-session-id';

/** The handshake's own fields that name the client; the rest of it is the SDK's to check. */
const Initialize = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.literal('initialize'),
  params: z.object({ protocolVersion: z.string().max(50), clientInfo: z.object({ name: z.string(), version: z.string() }) }),
});

/** A JSON-RPC error as the body of an HTTP refusal: what an MCP client shows its user. */
function refuse(reply: FastifyReply, status: number, message: string, id: unknown = null): FastifyReply {
  return reply
    .status(status)
    .type('application/json')
    .send({ jsonrpc: '2.0', error: { code: status === 404 ? -32001 : -32000, message }, id: typeof id === 'string' || typeof id === 'number' ? id : null });
}

const requestId = (body: unknown): unknown => (typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { id?: unknown }).id : null);

export const mcpApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime, tokens, readWaitMs, throttle, allowedOrigins } = app.nomos;
  const sessions = new McpSessions(runtime.db);
  // Bounded: past it the client reads the read models as they are.
  const caughtUp = async (position: number) => {
    await runtime.readWait.until(position, readWaitMs);
  };

  // The auth hook skips these routes (config.public) so that a refusal is a JSON-RPC error an MCP client can show.
  const who = async (request: FastifyRequest, reply: FastifyReply): Promise<McpPrincipal | null> => {
    try {
      if (tokens.length > 0) return authenticate(request, tokens, throttle);
      if (request.headers.authorization !== undefined) return authenticate(request, tokens);
      if (request.headers['x-nomos-actor'] !== undefined) {
        throw new HttpProblem(400, 'bad_actor', `with auth off an MCP client is recorded as agent:<its clientInfo name>; X-Nomos-Actor is not taken on /mcp: remove it`);
      }
      // The handshake names the client; later requests are the client of the session they carry.
      const handshake = Initialize.safeParse(request.body);
      if (handshake.success) return agentFor(handshake.data.params.clientInfo.name);
      const header = request.headers[SESSION_HEADER];
      const owner = typeof header === 'string' && /^[0-9a-f-]{36}$/.test(header) ? await sessions.principalOf(header) : null;
      // A session an operator's token opened (on a server with auth on) is not this tokenless caller's.
      return owner?.role === 'agent' ? owner : agentFor('');
    } catch (error) {
      if (!(error instanceof HttpProblem)) throw error;
      if (typeof error.extra.retry_after_seconds === 'number') void reply.header('retry-after', String(error.extra.retry_after_seconds));
      void refuse(reply, error.status, `${error.code}: ${error.message}`, requestId(request.body));
      return null;
    }
  };

  /** The client's session, from its header: 400 without one, 404 for one this token was never given (the client then initializes again). */
  const sessionOf = async (request: FastifyRequest, reply: FastifyReply, principal: McpPrincipal): Promise<McpSession | null> => {
    const header = request.headers[SESSION_HEADER];
    if (typeof header !== 'string' || header === '') {
      void refuse(reply, 400, 'Bad Request: send the Mcp-Session-Id header the server gave at initialize (initialize first)', requestId(request.body));
      return null;
    }
    const session = /^[0-9a-f-]{36}$/.test(header) ? await sessions.find(header, principal) : null;
    if (session === null) void refuse(reply, 404, `Session not found: no MCP session ${header.slice(0, 60)} for this token; initialize again`, requestId(request.body));
    return session;
  };

  app.post('/mcp', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const principal = await who(request, reply);
    if (principal === null) return reply;
    const handshake = Initialize.safeParse(request.body);
    let session: McpSession | null;
    if (handshake.success) {
      const client = Client.safeParse({ name: handshake.data.params.clientInfo.name.slice(0, 200) || 'unnamed', version: handshake.data.params.clientInfo.version.slice(0, 100) });
      if (!client.success) return refuse(reply, 400, 'Bad Request: clientInfo needs a name and a version', requestId(request.body));
      session = await sessions.open(principal, client.data, handshake.data.params.protocolVersion);
      reply.raw.setHeader(SESSION_HEADER, session.id);
    } else {
      session = await sessionOf(request, reply, principal);
      if (session === null) return reply;
    }
    // The SDK loads with the first MCP request, not with the server (a quarter of a second of its start).
    const [{ buildMcpServer }, { StreamableHTTPServerTransport }] = await Promise.all([import('../mcp/server.ts'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]);
    const server = buildMcpServer({ principal, session, correlationId: request.id }, { services: runtime.tools, sessions, caughtUp });
    // The SDK's own rebinding check, on what the origin guard (./origin.ts) let through: this Host, and the origins of pages it serves.
    const host = request.headers.host ?? '';
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true, enableDnsRebindingProtection: true, allowedHosts: [host], allowedOrigins: [...ownOrigins(host), ...allowedOrigins] });
    await server.connect(transport);
    reply.raw.on('close', () => void server.close());
    reply.hijack();
    await transport.handleRequest(request.raw, reply.raw, request.body);
    return reply;
  });

  app.delete('/mcp', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const principal = await who(request, reply);
    if (principal === null) return reply;
    const session = await sessionOf(request, reply, principal);
    if (session === null) return reply;
    const { opened } = await sessions.close(session.id, principal);
    // A session with work in flight stays open: the idle close ends it once that work has ended. A server that
    // stops here leaves it to the idle close too.
    if (opened !== null) await closeAbandoned(runtime.commandDeps, opened, { reason: 'mcp_session_ended', idleMs: 0 });
    return reply.status(204).send();
  });

  app.get('/mcp', { config: { public: true }, schema: { hide: true } }, (_request, reply) =>
    reply.status(405).header('allow', 'POST, DELETE').type('application/json').send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method Not Allowed: this server answers POST (and DELETE to end a session); it opens no server-to-client stream' }, id: null }),
  );

  done();
};
