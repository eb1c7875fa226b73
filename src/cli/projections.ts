// `nomos projections rebuild|status`, run against the configured database directly.
import type { Config } from '../config.ts';
import { projectionStatus, rebuildProjection } from '../projections/projector.ts';
import { openRuntime, projections } from '../runtime.ts';
import { claimDataDir } from './data-dir-lock.ts';

export async function rebuildCommand(config: Config, name?: string): Promise<void> {
  const chosen = name === undefined ? projections : projections.filter((p) => p.name === name);
  if (chosen.length === 0) throw new Error(`no projection named ${name}; known: ${projections.map((p) => p.name).join(', ')}`);
  const release = config.databaseUrl ? null : await claimDataDir(config.dataDir);
  const runtime = await openRuntime(config);
  try {
    for (const projection of chosen) {
      const started = Date.now();
      let last = 0;
      const { events } = await rebuildProjection({ store: runtime.store, db: runtime.db }, projection, (p) => {
        if (Date.now() - last > 500) {
          last = Date.now();
          process.stderr.write(`\r${projection.name}: ${p.events} events (position ${p.position})`);
        }
      });
      const seconds = (Date.now() - started) / 1000;
      process.stderr.write('\r');
      console.log(`${projection.name}: rebuilt from ${events} events in ${seconds.toFixed(1)} s`);
    }
  } finally {
    await runtime.close();
    await release?.();
  }
}

export async function statusCommand(config: Config): Promise<void> {
  const release = config.databaseUrl ? null : await claimDataDir(config.dataDir);
  const runtime = await openRuntime(config);
  try {
    for (const s of await projectionStatus({ store: runtime.store, db: runtime.db }, runtime.projections)) {
      console.log(`${s.name}\tv${s.version}\tposition ${s.position}\tlag ${s.lag}`);
    }
  } finally {
    await runtime.close();
    await release?.();
  }
}
