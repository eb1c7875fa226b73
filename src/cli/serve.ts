// `nomos serve`: open the runtime, start the projectors and the API, and shut down cleanly on a signal.
import { buildApp } from '../api/app.ts';
import type { Config } from '../config.ts';
import { openRuntime } from '../runtime.ts';
import { claimDataDir } from './data-dir-lock.ts';

export async function serve(config: Config): Promise<void> {
  const release = config.databaseUrl ? null : await claimDataDir(config.dataDir);
  const runtime = await openRuntime(config);
  const app = await buildApp({ runtime, readWaitMs: config.readWaitMs, bodyLimit: config.bodyLimit, logger: true });
  runtime.startProjectors((name, error) => app.log.error({ err: error, projection: name }, 'projector error; retrying'));
  const address = await app.listen({ port: config.port, host: config.host });
  app.log.info(`nomos listening on ${address} — events: ${runtime.description.eventStore}, read models: ${runtime.description.readModels}; auth: off (no API tokens configured)`);
  const stop = async () => {
    await app.close();
    await runtime.close();
    await release?.();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}
