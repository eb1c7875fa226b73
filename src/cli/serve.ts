// `nomos serve`: open the runtime, listen, start the projectors and the sweep; on a signal or a listen error,
// close everything in order under a deadline and exit (src/cli/shutdown.ts).
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { openDb } from '../adapters/db/open.ts';
import type { Config } from '../config.ts';
import { claimDataDir } from './data-dir-lock.ts';
import { type CloseStep, closeInOrder, onStopSignals } from './shutdown.ts';
import type { FastifyBaseLogger } from 'fastify';
import type { Runtime } from '../runtime.ts';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

function listenProblem(error: unknown, host: string, port: number): string {
  const code = (error as { code?: unknown }).code;
  const why = code === 'EADDRINUSE' ? 'the port is in use by another process (set PORT)' : code === 'EACCES' ? 'permission denied (a port below 1024?)' : code === 'EADDRNOTAVAIL' ? 'no such address on this machine (set HOST)' : error instanceof Error ? error.message : String(error);
  return `cannot listen on ${host}:${port}: ${why}${typeof code === 'string' ? ` (${code})` : ''}`;
}

async function readPem(path: string, variable: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new Error(`bad configuration: ${variable}=${path} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export async function serve(config: Config): Promise<void> {
  const { shutdownMs } = config;
  // Before anything opens: a certificate that cannot be read stops the start with nothing to close.
  const tls = config.tls && { cert: await readPem(config.tls.certPath, 'NOMOS_TLS_CERT'), key: await readPem(config.tls.keyPath, 'NOMOS_TLS_KEY') };
  const release = config.databaseUrl ? null : await claimDataDir(config.dataDir, { create: true });
  // The database opens (PGlite compiles its WebAssembly and starts) while the server's code loads.
  const opening = openDb(config);
  opening.catch(() => undefined); // awaited below; until then a failure must not count as unhandled
  const [{ openRuntime }, { buildApp }] = await Promise.all([import('../runtime.ts'), import('../api/app.ts')]);
  const db = await opening;
  const runtime = await openRuntime(config, { db });
  const app = await buildApp({
    runtime,
    readWaitMs: config.readWaitMs,
    bodyLimit: config.bodyLimit,
    maxStreamsPerPrincipal: config.maxStreams,
    logger: true,
    tokens: config.tokens,
    listenHost: config.host,
    allowedHosts: config.allowedHosts,
    allowedOrigins: config.allowedOrigins,
    ...(tls && { tls }),
  });
  // In the order they depend on each other: no request may reach a closed runtime, nor the runtime a released directory.
  const steps: CloseStep[] = [
    { name: 'the HTTP server (requests in flight, event streams)', close: () => app.close() },
    { name: 'the runtime (agent turns, executions, projectors and their leases, the event store)', close: () => runtime.close() },
    { name: 'the database', close: () => db.close() },
    ...(release ? [{ name: `the data directory's lock (${resolve(config.dataDir)})`, close: release }] : []),
  ];
  let stopping = false;
  const stop = async (why: string, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    app.log.info(`${why}: shutting down (NOMOS_SHUTDOWN_MS=${shutdownMs}; a second signal exits at once)`);
    const { unfinished, failed } = await closeInOrder(steps, shutdownMs);
    for (const f of failed) app.log.error({ err: f.error }, `shutdown: closing ${f.name} failed`);
    if (unfinished.length > 0) app.log.error(`shutdown: not finished after ${shutdownMs} ms (NOMOS_SHUTDOWN_MS); exiting with ${unfinished.join(', then ')} still open`);
    process.exit(unfinished.length > 0 || failed.length > 0 ? 1 : exitCode);
  };
  onStopSignals(
    (signal) => void stop(signal, 0),
    (signal) => {
      app.log.error(`${signal} again: exiting at once, without finishing the shutdown`);
      process.exit(1);
    },
  );

  const authOff = config.tokens.length === 0;
  // Without tokens anyone who can reach the port could approve commands: only this machine may.
  const host = authOff && !LOOPBACK.has(config.host) ? '127.0.0.1' : config.host;
  if (host !== config.host) app.log.warn(`auth is off (NOMOS_TOKENS unset): listening on ${host} instead of HOST=${config.host}`);
  let address: string;
  try {
    address = await app.listen({ port: config.port, host });
  } catch (error) {
    // Nothing has started yet but the open database; a server that cannot listen must not sit on it.
    app.log.error(listenProblem(error, host, config.port));
    await stop('cannot listen', 1);
    return;
  }
  if (stopping) return;
  if (!tls && !LOOPBACK.has(host)) {
    app.log.warn(
      `PLAIN HTTP ON A NON-LOOPBACK ADDRESS (${host}): API tokens and approvals cross the network unencrypted. Set NOMOS_TLS_CERT and NOMOS_TLS_KEY, or listen on 127.0.0.1 behind a TLS proxy (docs/security.md, "TLS")`,
    );
  }
  runtime.startProjectors((name, error) => app.log.error({ err: error, projection: name }, 'projector error; retrying'), {
    onRebuild: (name, event) => {
      if (event.phase === 'started') app.log.info({ projection: name }, 'projection rebuild: building the new version into shadow tables; the live tables keep answering');
      else app.log.info({ projection: name, events: event.events, seconds: event.seconds, resumed_from: event.resumedFrom, swapped: event.swapped }, 'projection rebuild: swapped in');
    },
  });
  runtime.startSweeper(config.sweepMs, (error) => app.log.error({ err: error }, 'approval/execution sweep failed; retrying'));
  runtime.startReactor({ onError: (error) => app.log.error({ err: error }, 'agent reactor failed; retrying') });
  runtime.startNotifier(address, { onError: (error) => app.log.error({ err: error }, 'notifier failed; retrying') });
  if (config.notify.channels.length > 0) app.log.info(`notifications to: ${config.notify.channels.map((c) => c.name).join(', ')}`);
  if (config.reachabilityEveryMs !== null) {
    runtime.startReachability(config.reachabilityEveryMs, { onError: (error) => app.log.error({ err: error }, 'host reachability check failed; retrying') });
  }
  try {
    const sealing = await runtime.startSealer({
      onError: (error) => app.log.error({ err: error }, 'sealer failed; retrying'),
      onLead: () => app.log.info('log: this server seals now (it holds the seal lease)'),
    });
    if (/NOT SEALING|not sealed/.test(sealing)) app.log.warn(sealing);
    else app.log.info(sealing);
  } catch (error) {
    // A signing key that cannot be used stops the start, as any bad configuration does.
    app.log.error(`bad configuration: ${error instanceof Error ? error.message : String(error)}`);
    await stop('bad signing key', 1);
    return;
  }
  const auth = authOff ? 'auth: OFF (no API tokens configured; loopback only)' : `auth: on (${config.tokens.length} tokens)`;
  app.log.info(`nomos listening on ${address} — events: ${runtime.description.eventStore}, read models: ${runtime.description.readModels}; ${auth}`);
  app.log.info(`web console: ${address}/`);
  await logAgentState(runtime, app.log);
}

/** Whether the agent is on, with which model, provider host (never the key) and budget, and whether it can reach hosts. */
async function logAgentState(runtime: Runtime, log: FastifyBaseLogger): Promise<void> {
  const ssh = runtime.executorConfigured ? 'SSH key: configured' : 'SSH key: none (NOMOS_SSH_KEY unset): commands cannot reach hosts';
  if (runtime.agent === null) {
    log.warn(`agent: off (set OPENAI_BASE_URL or OPENAI_API_KEY; POST /chat answers 503); ${ssh}`);
    return;
  }
  runtime.agent.logTo({ warn: (fields, message) => log.warn(fields, message), error: (fields, message) => log.error(fields, message) });
  const a = await runtime.agent.describe();
  const window = `context window ${a.window.windowTokens} tokens (${a.window.source === 'configured' ? 'NOMOS_CONTEXT_TOKENS' : a.window.source === 'known' ? `known for ${a.model}` : 'default; set NOMOS_CONTEXT_TOKENS'})`;
  log.info(
    `agent: on — model ${a.model} at ${a.providerHost}; ${window}, prompt budget ${a.window.budgetTokens} (system prompt ${a.systemPromptTokens}, tools ${a.toolsTokens}); ${ssh}`,
  );
}
