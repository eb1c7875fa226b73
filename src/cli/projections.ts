// `nomos projections rebuild|status`, run against the configured database directly. A rebuild goes into
// shadow tables, so a server on the same PostgreSQL keeps answering (and following the log) meanwhile;
// the shadow is swapped in when it has caught up. Interrupted, it resumes where it stopped next time.
import { SingleBar } from 'cli-progress';
import type { Config } from '../config.ts';
import { projectionStatus, rebuildProjections } from '../projections/projector.ts';
import { openRuntime, projections, type Runtime } from '../runtime.ts';
import type { Projection } from '../projections/projection.ts';
import { claimDataDir } from './data-dir-lock.ts';

export interface RebuildCommandOptions {
  restart: boolean;
  /** Events per transaction; the projector's default when absent. */
  batchSize?: number;
}

export async function rebuildCommand(config: Config, name: string | undefined, options: RebuildCommandOptions): Promise<void> {
  const chosen = name === undefined ? projections : projections.filter((p) => p.name === name);
  if (chosen.length === 0) throw new Error(`no projection named ${name}; known: ${projections.map((p) => p.name).join(', ')}`);
  const release = config.databaseUrl ? null : await claimDataDir(config.dataDir, { create: false });
  const runtime = await openRuntime(config);
  try {
    await rebuildMany(runtime, chosen, options);
  } finally {
    await runtime.close();
    await release?.();
  }
}

const formatRate = (perSecond: number) => (perSecond >= 10_000 ? `${Math.round(perSecond / 1000)}k` : String(Math.round(perSecond)));

/**
 * The projections in one pass over the log, with a progress bar over its positions (the furthest-behind
 * projection's): events/s and the ETA to the head. Then a line per projection.
 */
async function rebuildMany(runtime: Runtime, chosen: readonly Projection[], options: RebuildCommandOptions): Promise<void> {
  const label = chosen.length === 1 ? chosen[0]!.name : 'all';
  const bar = new SingleBar({
    format: `${label.padEnd(11)} [{bar}] {percentage}% | position {value}/{total} | {rate} events/s | ETA {eta_formatted}`,
    barsize: 24,
    hideCursor: true,
    // Where stderr is not a terminal (CI, a log file), a line every few seconds instead of redrawing.
    noTTYOutput: true,
    notTTYSchedule: 3_000,
    etaBuffer: 50,
  });
  const started = Date.now();
  let head = (await runtime.store.head()).position;
  const positions = new Map<string, number>();
  const firsts = new Map<string, number>();
  let drawn = false;
  let firstPosition: number | null = null;
  // The head moves while we rebuild (a server may be appending): look again now and then.
  const headWatch = setInterval(() => {
    void runtime.store.head().then((h) => {
      head = h.position;
      bar.setTotal(Math.max(head, 1));
    }, () => undefined);
  }, 1_000);
  let results;
  try {
    results = await rebuildProjections(
      { store: runtime.store, db: runtime.db },
      chosen,
      (name, p) => {
        if (!firsts.has(name)) firsts.set(name, p.events);
        positions.set(name, p.position);
        if (positions.size < chosen.length) return;
        const position = Math.min(...positions.values());
        firstPosition ??= position;
        const seconds = Math.max((Date.now() - started) / 1000, 0.001);
        const rate = formatRate((position - firstPosition) / seconds);
        // The first report says where it starts: 0, or where a stopped rebuild got to.
        if (drawn) bar.update(position, { rate });
        else bar.start(Math.max(head, position, 1), position, { rate });
        drawn = true;
      },
      { restart: options.restart, ...(options.batchSize !== undefined && { batchSize: options.batchSize }) },
    );
  } finally {
    clearInterval(headWatch);
    if (drawn) bar.stop();
  }
  const seconds = (Date.now() - started) / 1000;
  for (const projection of chosen) {
    const result = results.get(projection.name)!;
    const resumed = result.resumedFrom === null ? '' : ` (resumed from position ${result.resumedFrom})`;
    const outcome = result.swapped ? 'swapped in' : 'swapped in by another process';
    const rate = formatRate((result.events - (firsts.get(projection.name) ?? 0)) / Math.max(seconds, 0.001));
    console.log(`${projection.name}: rebuilt from ${result.events} events${resumed} in ${seconds.toFixed(1)} s, ${rate} events/s; ${outcome}`);
  }
}

export async function statusCommand(config: Config): Promise<void> {
  const release = config.databaseUrl ? null : await claimDataDir(config.dataDir, { create: false });
  const runtime = await openRuntime(config);
  try {
    for (const s of await projectionStatus({ store: runtime.store, db: runtime.db }, runtime.projections)) {
      const rebuild = s.rebuild ? `\trebuilding v${s.rebuild.version} at position ${s.rebuild.position} (lag ${s.rebuild.lag})` : '';
      console.log(`${s.name}\tv${s.version}\t${s.state}\tposition ${s.position}\tlag ${s.lag}${rebuild}`);
    }
  } finally {
    await runtime.close();
    await release?.();
  }
}
