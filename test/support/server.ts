// A real Nomos server for API tests: a fresh database, the runtime with its projectors, and the HTTP API
// listening on a loopback port, driven with fetch like any client.
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.ts';
import type { ApiToken } from '../../src/api/auth.ts';
import type { Executor } from '../../src/ports/executor.ts';
import type { ExecutionSettings } from '../../src/execution/service.ts';
import { loadConfig } from '../../src/config.ts';
import type { ModelPrices } from '../../src/domain/usage/prices.ts';
import { type Runtime, openRuntime } from '../../src/runtime.ts';
import type { TestDatabase, TestDb } from './databases.ts';

export interface TestServer {
  readonly url: string;
  readonly runtime: Runtime;
  readonly app: FastifyInstance;
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

export async function startTestServer(
  database: TestDatabase,
  options: {
    readWaitMs?: number;
    bodyLimit?: number;
    maxStreamsPerPrincipal?: number;
    tokens?: readonly ApiToken[];
    executor?: Executor;
    execution?: Partial<ExecutionSettings>;
    llm?: { baseURL: string; apiKey: string; model: string };
    /** false: the projectors are not started (the test starts them with runtime.startProjectors()). */
    projectors?: boolean;
    /** The origin guard's settings (NOMOS_ALLOWED_HOSTS, NOMOS_ALLOWED_ORIGINS, HOST). */
    allowedHosts?: readonly string[];
    allowedOrigins?: readonly string[];
    listenHost?: string;
    /** NOMOS_MODEL_PRICES and NOMOS_CONTEXT_TOKENS. */
    modelPrices?: ModelPrices;
    contextTokens?: number;
  } = {},
): Promise<TestServer> {
  const testDb: TestDb = await database.open();
  const defaults = loadConfig({});
  // The classifier's time bound is under test in test/adapters (a pool of its own); here a loaded test machine's
  // slow first thread must not turn a verdict a test expects into too-slow.
  const config = { ...defaults, execution: { ...defaults.execution, ...options.execution }, llm: options.llm ?? null, classifyTimeoutMs: 30_000,
    modelPrices: options.modelPrices ?? {}, contextTokens: options.contextTokens ?? null };
  const runtime = await openRuntime(config, { db: testDb.db, ...(options.executor && { executor: options.executor }) });
  if (options.projectors !== false) runtime.startProjectors();
  runtime.startReactor({ pollMs: 200 });
  // NOMOS_TEST_CONSOLE_DIR: a console built elsewhere (a build of one's own while another runs in web/dist).
  const consoleRoot = process.env.NOMOS_TEST_CONSOLE_DIR;
  const app = await buildApp({ runtime, readWaitMs: options.readWaitMs ?? 5_000, bodyLimit: options.bodyLimit ?? 1_048_576, tokens: options.tokens ?? [], ...(options.maxStreamsPerPrincipal !== undefined && { maxStreamsPerPrincipal: options.maxStreamsPerPrincipal }), ...(consoleRoot && { consoleRoot }),
    ...(options.allowedHosts && { allowedHosts: options.allowedHosts }),
    ...(options.allowedOrigins && { allowedOrigins: options.allowedOrigins }),
    ...(options.listenHost !== undefined && { listenHost: options.listenHost }),
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    runtime,
    app,
    async request(method, path, body, headers = {}) {
      // A POST without a JSON body needs the client header (src/api/origin.ts), as every client of the API sends it.
      const init: RequestInit = { method, headers: { 'x-nomos-client': 'test', ...headers } };
      if (body !== undefined) {
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
        (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
      }
      const res = await fetch(url + path, init);
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text === '' ? null : JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async close() {
      const t = Date.now();
      const step = (name: string) => process.env.NOMOS_DEBUG_CLOSE && console.log(`close: ${name} after ${Date.now() - t} ms`);
      await app.close();
      step('app');
      await runtime.close();
      step('runtime');
      await testDb.close();
      step('db');
    },
  };
}
