// Builds the HTTP API: shared context, error mapping, then one encapsulated plugin per area. Only main listens.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { type ZodTypeProvider, validatorCompiler } from 'fastify-type-provider-zod';
import type { Runtime } from '../runtime.ts';
import { AccessLog } from './access-log.ts';
import type { ApiToken } from './auth.ts';
import { nomosContext } from './context.ts';
import { entitiesApi } from './entities.ts';
import { changesApi } from './changes.ts';
import { chatApi } from './chat.ts';
import { consoleApp } from './console.ts';
import { drainOnClose } from './drain.ts';
import { answerFrameworkError, registerErrorHandling } from './errors.ts';
import { registerJsonBody } from './json-body.ts';
import { knowledgeApi } from './knowledge.ts';
import { mcpApi } from './mcp.ts';
import { metricsApi } from './metrics.ts';
import { registerOpenApi, serializeAsJson } from './openapi.ts';
import { readYourWrites } from './read-your-writes.ts';
import { executionsApi } from './executions.ts';
import { operationsApi } from './operations.ts';
import { sessionsApi } from './sessions.ts';
import { DEFAULT_MAX_STREAMS, capStreams } from './sse.ts';
import { streamApi } from './stream.ts';

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
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
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
  capStreams(app, options.maxStreamsPerPrincipal ?? DEFAULT_MAX_STREAMS);
  registerJsonBody(app);
  drainOnClose(app);
  await app.register(nomosContext, { runtime: options.runtime, readWaitMs: options.readWaitMs ?? 5_000, tokens: options.tokens ?? [] });
  await app.register(readYourWrites);
  // Before every route, so the document sees them all.
  await registerOpenApi(app);
  await app.register(metricsApi);
  await app.register(sessionsApi);
  await app.register(operationsApi);
  await app.register(entitiesApi);
  await app.register(executionsApi);
  await app.register(chatApi);
  await app.register(knowledgeApi);
  await app.register(streamApi(options.runtime.bus));
  await app.register(changesApi);
  await app.register(mcpApi);
  await app.register(consoleApp, options.consoleRoot === undefined ? {} : { root: options.consoleRoot });
  await app.ready();
  return app;
}
