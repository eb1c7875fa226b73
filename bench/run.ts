// `npm run bench [-- --scale full|medium|small] [--out FILE] [--keep]`: the Nomos benchmark on a real PostgreSQL
// (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres). It creates a fresh database, appends
// generated sessions, rebuilds every projection, starts `nomos serve` on it, measures GET /sessions, the
// audit both ways and the projection lag over HTTP, then the write path (commands through HTTP on fresh
// databases, PostgreSQL and embedded, beside the store alone: bench/write-path.ts), the agent's context builder
// beside the model call it precedes (bench/context.ts), the policy what-if over a history of its own
// (bench/policy-what-if.ts), prints one markdown table and, at full scale or with --out, writes it (with the
// profile notes of bench/profile-notes.md) to a file.
import { cpus, totalmem } from 'node:os';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Db } from '../src/ports/db.ts';
import { SqlEventStore } from '../src/adapters/eventstore/sql.ts';
import { Projector } from '../src/projections/projector.ts';
import { projections } from '../src/runtime.ts';
import { appendSessions, type AppendRun } from './append.ts';
import { measureCliStart } from './cli.ts';
import { CONTEXT_METHOD, CONTEXT_SCALES, contextRows, measureContext } from './context.ts';
import { WHAT_IF_METHOD, WHAT_IF_SCALES, measureWhatIf, whatIfRows } from './policy-what-if.ts';
import { WRITE_PATH_SCALES, measureWritePath, writePathRows } from './write-path.ts';
import { logRows, measureLog } from './log.ts';
import { READ_MODEL_RUNS, compareAudits } from './audit.ts';
import { createBenchDatabase, serverVersion } from './database.ts';
import { sessions } from './generator.ts';
import { measureLag } from './lag.ts';
import { listSessionsLatency } from './list-sessions.ts';
import { Rng } from './prng.ts';
import { rebuildAll } from './rebuild.ts';
import { SCALES, type Scale } from './scales.ts';
import { startServer } from './server.ts';
import { ms, n, type Row, renderTable, s } from './table.ts';

const SEED = 20_260_718;
const DAY = 86_400_000;
const RESULTS = fileURLToPath(new URL('./results.md', import.meta.url));
const NOTES = fileURLToPath(new URL('./profile-notes.md', import.meta.url));
const LOAD_SLICE = 200_000;
const BLOCKERS = ['approval_timeout', 'approval_denied', 'tool_error', 'model_refusal', 'model_empty_response', 'classifier_overreach', 'user_abandoned', 'missing_knowledge', 'missing_capability'];

const log = (message: string) => console.error(`bench: ${message}`);
const perSecond = (run: { events: number; seconds: number }) => run.events / run.seconds;

/** Every outcome and every blocker the rules derive should appear; a missing one is named. */
async function populationCoverage(db: Db): Promise<string> {
  const { rows } = await db.query<{ outcome: string | null; blocker: string | null; count: number }>(
    'SELECT outcome, blocker, count(*)::int AS count FROM sessions GROUP BY 1, 2',
  );
  const by = (key: (r: (typeof rows)[number]) => string | null) => {
    const totals = new Map<string, number>();
    for (const r of rows) totals.set(key(r) ?? 'none', (totals.get(key(r) ?? 'none') ?? 0) + r.count);
    return [...totals].sort((a, b) => b[1] - a[1]).map(([k, c]) => `${k} ${n(c)}`).join(', ');
  };
  const missing = BLOCKERS.filter((b) => !rows.some((r) => r.blocker === b));
  return `outcomes ${by((r) => r.outcome ?? 'active')}; blockers ${by((r) => r.blocker)}${missing.length > 0 ? `; MISSING blockers: ${missing.join(', ')}` : '; every blocker present'}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { scale: { type: 'string', default: 'full' }, out: { type: 'string' }, port: { type: 'string', default: '18092' }, keep: { type: 'boolean', default: false } },
  });
  const scale: Scale | undefined = SCALES[values.scale];
  if (!scale) throw new Error(`unknown scale ${values.scale}; one of ${Object.keys(SCALES).join(', ')}`);
  const out = values.out ?? (scale.name === 'full' ? RESULTS : null);
  const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const began = performance.now();

  const bench = await createBenchDatabase(serverUrl, 40);
  const store = new SqlEventStore(bench.db);
  let server: Awaited<ReturnType<typeof startServer>> | null = null;
  try {
    const now = Date.now();
    // Sessions spread over the last 30 days, so `since` filters select part of them.
    const source = sessions(new Rng(SEED), { from: now - 30 * DAY, to: now - DAY / 24, count: scale.sessions });
    const loaded = { events: 0, sessions: 0 };
    const append = async (writers: number, untilEvents: number, perCommand: boolean): Promise<AppendRun> => {
      const run = await appendSessions(store, source, { writers, untilEvents, perCommand });
      loaded.events += run.events;
      loaded.sessions += run.sessions;
      return run;
    };
    // Bulk loads go in slices: appendSessions generates its sessions before it starts the clock, and millions of
    // events held at once would not fit in the heap.
    const load = async (untilEvents: number): Promise<void> => {
      for (let left = untilEvents; left > 0; ) {
        const run = await append(8, Math.min(left, LOAD_SLICE), false);
        if (run.events === 0) return;
        left -= run.events;
      }
    };

    log(`scale ${scale.name}, database ${bench.name}: appending, 1 writer`);
    const one = await append(1, scale.appendEvents.one, true);
    log('appending, 32 writers');
    const thirtyTwo = await append(32, scale.appendEvents.thirtyTwo, true);
    log(`loading the log to ${n(scale.rebuildEvents)} events`);
    await load(scale.rebuildEvents - loaded.events);
    const rebuildLog = loaded.events;
    log(`rebuilding every projection from ${n(rebuildLog)} events`);
    const rebuilt = await rebuildAll(store, bench.db, projections);

    if (loaded.sessions < scale.sessions) {
      log(`loading up to ${n(scale.sessions)} sessions, then catching the projections up`);
      const perSession = loaded.events / loaded.sessions;
      while (loaded.sessions < scale.sessions) await load(Math.ceil((scale.sessions - loaded.sessions) * perSession));
    }
    const catchUpStarted = performance.now();
    await Promise.all(projections.map((p) => new Projector({ store, db: bench.db }, p).catchUp()));
    const catchUp = { events: loaded.events - rebuildLog, seconds: (performance.now() - catchUpStarted) / 1000 };
    log(`sealing the ${n(loaded.events)}-event log, then verifying its chain`);
    const sealedLog = await measureLog(bench.db, async () => {
      // Millions of rows were just written: let PostgreSQL's vacuum and statistics settle now, as autovacuum would
      // over time, rather than in the middle of the chain check and the read measurements.
      log('VACUUM ANALYZE and CHECKPOINT after the load and the seal');
      await bench.db.exec('VACUUM ANALYZE');
      // And the load's dirty pages written out now, not by the checkpointer in the middle of the latencies below.
      await bench.db.exec('CHECKPOINT');
    });
    const coverage = await populationCoverage(bench.db);

    log('starting nomos serve');
    server = await startServer(bench.url, Number(values.port));
    log(`GET /sessions at ${n(loaded.sessions)} sessions`);
    const list = await listSessionsLatency(server.base, scale.listRequests);
    log(`audit of ${n(scale.auditSessions)} sessions, both ways`);
    const audit = await compareAudits(server.base, bench.db, scale.auditSessions);
    const lags = [];
    for (const rate of scale.lag.rates) {
      log(`lag at ${n(rate)} events/s for ${scale.lag.seconds} s`);
      lags.push(await measureLag(store, bench.db, source, { eventsPerSecond: rate, seconds: scale.lag.seconds }));
    }
    const peak = await server.peakMemory();
    await server.stop();
    server = null;
    // The write path on fresh databases of its own (the loaded one would make its first commands the
    // bench's slowest), the store alone beside it.
    const writePath = await measureWritePath(serverUrl, WRITE_PATH_SCALES[scale.name === 'full' ? 'full' : 'small']!, Number(values.port) + 1);
    const context = await measureContext(serverUrl, CONTEXT_SCALES[scale.name === 'full' ? 'full' : 'small']!);
    const whatIf = await measureWhatIf(serverUrl, WHAT_IF_SCALES[scale.name === 'full' ? 'full' : 'small']!, Number(values.port) + 2);
    log('command line start times');
    const cli = await measureCliStart();

    const rebuildSeconds = rebuilt.together.seconds;
    const rows: Row[] = [
      { metric: 'append, 1 session writer (one append per command)', figure: `${n(perSecond(one))} events/s (${n(one.events)} events, ${s(one.seconds)})`, target: null },
      { metric: 'append, 32 concurrent session writers', figure: `${n(perSecond(thirtyTwo))} events/s (${n(thirtyTwo.events)} events, ${s(thirtyTwo.seconds)})`, target: '≥ 5 000 events/s', met: perSecond(thirtyTwo) >= 5_000 },
      {
        metric: `rebuild, all ${rebuilt.alone.length} projections in one pass (nomos projections rebuild), ${n(rebuildLog)}-event log`,
        figure: `${n(rebuildLog / rebuildSeconds)} events/s (${s(rebuildSeconds)}; 1 M events: ${s((rebuildSeconds * 1_000_000) / rebuildLog)}${rebuildLog === 1_000_000 ? '' : ', extrapolated'})`,
        target: '≥ 50 000 events/s',
        met: rebuildLog / rebuildSeconds >= 50_000,
      },
      ...rebuilt.alone.map((r): Row => ({ metric: `rebuild, ${r.projection} projection alone`, figure: `${n(perSecond(r))} events/s (${s(r.seconds)})`, target: '≥ 50 000 events/s', met: perSecond(r) >= 50_000 })),
      { metric: `live catch-up, all projectors side by side, ${n(catchUp.events)} new events`, figure: `${n(perSecond(catchUp))} events/s (${s(catchUp.seconds)})`, target: null },
      { metric: `GET /sessions, limit 50, filters, p50 (${n(list.requests)} requests, ${n(loaded.sessions)} sessions)`, figure: ms(list.p50), target: null },
      { metric: 'GET /sessions, limit 50, filters, p99', figure: ms(list.p99), target: '< 10 ms', met: list.p99 < 10 },
      ...lags.flatMap((lag): Row[] => [
        { metric: `projection lag p50, appends at ${n(lag.eventsPerSecond)} events/s (achieved; ${n(lag.events)} events)`, figure: ms(lag.p50), target: null },
        { metric: `projection lag p99, appends at ${n(lag.eventsPerSecond)} events/s`, figure: ms(lag.p99), target: '< 100 ms', met: lag.p99 < 100 },
      ]),
      {
        metric: `audit of ${n(audit.sessions)} sessions: transcript walk ÷ read model (median of ${READ_MODEL_RUNS} runs)`,
        figure: `${audit.ratio.toFixed(1)}× (${ms(audit.transcriptSeconds * 1000)} vs ${ms(audit.readModelSeconds * 1000)}${audit.mismatches > 0 ? `; ${audit.mismatches} sessions counted differently!` : '; counts agree'})`,
        target: '≥ 100×',
        met: audit.ratio >= 100,
      },
      { metric: 'server peak memory (VmHWM of nomos serve)', figure: `${n(peak / 1_048_576)} MiB`, target: null },
      ...logRows(sealedLog),
      ...writePathRows(writePath),
      ...contextRows(context),
      ...whatIfRows(whatIf),
      { metric: 'nomos --help, wall (median of 5)', figure: ms(cli.helpMs), target: '≤ 500 ms', met: cli.helpMs <= 500 },
      { metric: 'nomos classify, wall (median of 5)', figure: ms(cli.classifyMs), target: null },
      { metric: `nomos serve to /healthz, existing embedded data dir (first start on an empty one: ${ms(cli.serveFirstMs)})`, figure: ms(cli.serveExistingMs), target: '≤ 2 s', met: cli.serveExistingMs <= 2_000 },
    ];
    const header = [
      `# Nomos benchmark — ${scale.name} scale`,
      '',
      `- date: ${new Date().toISOString()}; run took ${s((performance.now() - began) / 1000)}`,
      `- machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${n(totalmem() / 1_073_741_824)} GiB RAM, Node ${process.version}, PostgreSQL ${await serverVersion(bench.db)}`,
      `- data: ${n(loaded.sessions)} generated sessions, ${n(loaded.events)} events (seed ${SEED}); the rebuild ran on the first ${n(rebuildLog)}`,
      `- population: ${coverage}`,
      '- method: appends are SqlEventStore.append calls with the right expected version, one per command, no server running; the rest of the log is loaded one append per session (same events); rebuilds go through rebuildProjections (all in one pass) and rebuildProjection (each alone); `VACUUM ANALYZE` and `CHECKPOINT` after the load, before the HTTP figures; HTTP figures are against a spawned `nomos serve`, requests one at a time',
      '- write path: fresh databases; each client (keep-alive node:http) owns a session and posts `post_user_message` commands one after another (one event each), every answer waiting for the read models (read-your-writes, the default); the store-alone rows append the same one-event batches with SqlEventStore.append in the same run, no server; the 32 clients run five times: alone (their row), then with a reader of GET /sessions in a process of its own, one request after another (its row, with the writers’ rate meanwhile), then with the same reader on /healthz, then on /me, then with the reader of GET /sessions again while the 32 send 1 000 commands/s in all at a set pace; the server’s event loop delay and garbage collections in those rows come from its GET /metrics, scraped before and after the phase',
      `- context builder: ${CONTEXT_METHOD}`,
      `- policy what-if: ${WHAT_IF_METHOD}`,
    ];
    // The targets are set for the full scale (1 M events, 100 k sessions, an audit of 10 k).
    const judged = scale.name === 'full';
    if (!judged) header.push(`- targets: set for the full scale; at ${scale.name} scale the figures show that every measurement runs, and are not judged against them`);
    const table = renderTable(header, rows, { judged });
    console.log(table);
    if (out !== null) {
      const notes = await readFile(NOTES, 'utf8').catch(() => '');
      await writeFile(out, notes ? `${table}
${notes}` : table);
      log(`wrote ${out}`);
    }
  } finally {
    await server?.stop();
    await store.close();
    if (values.keep) {
      // --keep: the loaded database stays, to profile a figure against (drop it by hand afterwards).
      await bench.db.close();
      log(`kept database ${bench.url}`);
    } else {
      await bench.drop();
    }
    log(`done in ${s((performance.now() - began) / 1000)}`);
  }
}

await main();
