// Builds the HTTP API: shared context, error mapping, then one encapsulated plugin per area. Only main listens.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { type ZodTypeProvider, validatorCompiler } from 'fastify-type-provider-zod';
import type { Runtime } from '../runtime.ts';
import { AccessLog } from './access-log.ts';
import { AuthThrottle } from './auth-throttle.ts';
import type { ApiToken } from './auth.ts';
import { nomosContext } from './context.ts';
import { entitiesApi } from './entities.ts';
import { changesApi } from './changes.ts';
import { chatApi } from './chat.ts';
import { consoleApp } from './console.ts';
import { drainOnClose } from './drain.ts';
import { answerFrameworkError, registerErrorHandling } from './errors.ts';
import { registerJsonBody } from './json-body.ts';
import { guardOrigin } from './origin.ts';
import { knowledgeApi } from './knowledge.ts';
import { mcpApi } from './mcp.ts';
import { metricsApi } from './metrics.ts';
import { registerOpenApi, serializeAsJson } from './openapi.ts';
import { readYourWrites } from './read-your-writes.ts';
import { executionsApi } from './executions.ts';
import { notificationsApi } from './notifications.ts';
import { logApi } from './log.ts';
import { redactionsApi } from './redactions.ts';
import { receiptsApi } from './receipts.ts';
import { operationsApi } from './operations.ts';
import { sessionsApi } from './sessions.ts';
import { DEFAULT_MAX_STREAMS, capStreams } from './sse.ts';
import { streamApi } from './stream.ts';
import { usageApi } from './usage.ts';
import { agentApi } from './agent.ts';
import { policyApi } from './policy.ts';
import { policyWhatIfApi } from './policy-what-if.ts';
import { policySuggestionsApi } from './policy-suggestions.ts';

export interface AppOptions {
  readonly runtime: Runtime;
  readonly readWaitMs?: number;
  readonly bodyLimit?: number;
  readonly logger?: boolean;
  /** API tokens; none means auth is off. */
  readonly tokens?: readonly ApiToken[];
  /** How many event streams (GET /sessions/:id/stream, /changes) one principal may hold open (NOMOS_MAX_STREAMS). */
  readonly maxStreamsPerPrincipal?: number;
  /** Where the built web console is (default: web/dist beside the sources). */
  readonly consoleRoot?: string;
  /** The address or name the server listens on (HOST): a Host header may name it. */
  readonly listenHost?: string;
  /** Other names of this server a Host header may carry (NOMOS_ALLOWED_HOSTS); any makes the Host checked with auth on too. */
  readonly allowedHosts?: readonly string[];
  /** Origins besides the server's own whose pages may change state (NOMOS_ALLOWED_ORIGINS). */
  readonly allowedOrigins?: readonly string[];
  /** PEM certificate and key: the server speaks HTTPS (NOMOS_TLS_CERT, NOMOS_TLS_KEY). */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    // A Fastify built for https types its server as one; the routes and hooks here are the same on both.
    ...(options.tls && { https: { cert: options.tls.cert, key: options.tls.key } }),
    logger: options.logger ?? false,
    logController: new AccessLog(),
    bodyLimit: options.bodyLimit ?? 1_048_576,
    genReqId: () => randomUUID(),
    // Event streams and keep-alive sockets would hold close() open: end them (clients resume by Last-Event-ID),
    // once the requests in flight are answered (drainOnClose).
    forceCloseConnections: true,
    // A path that is not valid percent-encoded UTF-8 never reaches a route: answer it like every other problem.
    frameworkErrors: answerFrameworkError,
    // Query strings are flat here: a repeated key is refused by the schema rather than merged.
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializeAsJson);
  registerErrorHandling(app);
  const tokens = options.tokens ?? [];
  const allowedHosts = options.allowedHosts ?? [];
  // Before authentication, so that a request from a rebinding name or another origin is refused unread.
  guardOrigin(app, { allowedHosts, allowedOrigins: options.allowedOrigins ?? [], listenHost: options.listenHost ?? null, checkHost: tokens.length === 0 || allowedHosts.length > 0 });
  capStreams(app, options.maxStreamsPerPrincipal ?? DEFAULT_MAX_STREAMS);
  registerJsonBody(app);
  drainOnClose(app);
  await app.register(nomosContext, { runtime: options.runtime, readWaitMs: options.readWaitMs ?? 5_000, tokens, allowedOrigins: options.allowedOrigins ?? [], throttle: new AuthThrottle() });
  await app.register(readYourWrites);
  // Before every route, so the document sees them all.
  await registerOpenApi(app);
  await app.register(metricsApi);
  await app.register(sessionsApi);
  await app.register(operationsApi);
  await app.register(entitiesApi);
  await app.register(executionsApi);
  await app.register(notificationsApi);
  await app.register(logApi);
  await app.register(redactionsApi);
  await app.register(receiptsApi);
  await app.register(usageApi);
  await app.register(agentApi);
  await app.register(policyApi);
  await app.register(policyWhatIfApi);
  await app.register(policySuggestionsApi);
  await app.register(chatApi);
  await app.register(knowledgeApi);
  await app.register(streamApi(options.runtime.bus));
  await app.register(changesApi);
  await app.register(mcpApi);
  await app.register(consoleApp, options.consoleRoot === undefined ? {} : { root: options.consoleRoot });
  await app.ready();
  return app;
}
