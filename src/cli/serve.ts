// `nomos serve`: open the runtime, start the projectors and the API, and shut down cleanly on a signal.
import { buildApp } from '../api/app.ts';
import type { Config } from '../config.ts';
import { openRuntime } from '../runtime.ts';
import { claimDataDir } from './data-dir-lock.ts';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export async function serve(config: Config): Promise<void> {
  const release = config.databaseUrl ? null : await claimDataDir(config.dataDir);
  const runtime = await openRuntime(config);
  const app = await buildApp({ runtime, readWaitMs: config.readWaitMs, bodyLimit: config.bodyLimit, logger: true, tokens: config.tokens });
  runtime.startProjectors((name, error) => app.log.error({ err: error, projection: name }, 'projector error; retrying'), {
    onRebuild: (name, event) => {
      if (event.phase === 'started') app.log.info({ projection: name }, 'projection rebuild: building the new version into shadow tables; the live tables keep answering');
      else app.log.info({ projection: name, events: event.events, seconds: event.seconds, resumed_from: event.resumedFrom, swapped: event.swapped }, 'projection rebuild: swapped in');
    },
  });
  runtime.startSweeper(config.sweepMs, (error) => app.log.error({ err: error }, 'approval/execution sweep failed; retrying'));
  runtime.startReactor({ onError: (error) => app.log.error({ err: error }, 'agent reactor failed; retrying') });
  const authOff = config.tokens.length === 0;
  // Without tokens anyone who can reach the port could approve commands: only this machine may.
  const host = authOff && !LOOPBACK.has(config.host) ? '127.0.0.1' : config.host;
  if (host !== config.host) app.log.warn(`auth is off (NOMOS_TOKENS unset): listening on ${host} instead of HOST=${config.host}`);
  const address = await app.listen({ port: config.port, host });
  const auth = authOff ? 'auth: OFF (no API tokens configured; loopback only)' : `auth: on (${config.tokens.length} tokens)`;
  app.log.info(`nomos listening on ${address} — events: ${runtime.description.eventStore}, read models: ${runtime.description.readModels}; ${auth}`);
  const stop = async () => {
    await app.close();
    await runtime.close();
    await release?.();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}
