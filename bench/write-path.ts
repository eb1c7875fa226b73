// The write path's figures (bench/commands.ts) on both databases, in one run: the store alone, then commands
// through a spawned `nomos serve` on PostgreSQL and on the embedded default. Used by bench/run.ts; run alone
// with `npm run bench:write [-- --scale small]` to profile it (BENCH_SERVER_NODE_ARGS passes --cpu-prof).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SqlEventStore } from '../src/adapters/eventstore/sql.ts';
import { type CommandRun, type StoreRun, type Visibility, commandsThroughHttp, storeAlone, visibleInList } from './commands.ts';
import { createBenchDatabase } from './database.ts';
import { startServer } from './server.ts';
import { measureSealedWrites, type SealedWrites, sealedWriteRows } from './log.ts';
import { ms, n, type Row, s } from './table.ts';

export interface WritePathScale {
  /** Commands each client sends, alone and as one of 32. */
  readonly one: number;
  readonly perClientOf32: number;
  /** Commands each of the 32 clients follows into GET /sessions. */
  readonly visibility: number;
  /** The embedded default's runs (one connection: smaller). */
  readonly embedded: { readonly one: number; readonly perClientOf32: number };
}

export const WRITE_PATH_SCALES: Record<string, WritePathScale> = {
  full: { one: 2_000, perClientOf32: 200, visibility: 20, embedded: { one: 500, perClientOf32: 30 } },
  small: { one: 100, perClientOf32: 10, visibility: 3, embedded: { one: 50, perClientOf32: 5 } },
};

export interface WritePath {
  readonly store: { readonly one: StoreRun; readonly many: StoreRun };
  /**
   * many: 32 clients writing; reading: 32 clients writing again while a reader reads the list; floor: again, the
   * reader on /healthz (one statement of one row); bare: again, the reader on /me (no statement); paced: the
   * list's reader again, the 32 sending PACED_RATE commands a second in all (the machine keeps headroom).
   */
  readonly postgres: {
    readonly one: CommandRun;
    readonly many: CommandRun;
    readonly reading: CommandRun;
    readonly floor: CommandRun;
    readonly bare: CommandRun;
    readonly paced: CommandRun;
    readonly visibility: Visibility;
  };
  /** postgres.one and .many again, on a fresh database with a signing key: the log sealed behind them. */
  readonly sealed: SealedWrites;
  readonly embedded: { readonly one: CommandRun; readonly many: CommandRun };
}

const log = (message: string) => console.error(`bench: ${message}`);

const LIST = '/sessions?limit=50';
/** The 32 writers' rate in all, in the phase where they leave the machine headroom: about half what they reach. */
const PACED_RATE = 1_000;

/** Every figure, PostgreSQL first (a fresh database on `serverUrl`), then a fresh embedded data directory. */
export async function measureWritePath(serverUrl: string, scale: WritePathScale, port: number): Promise<WritePath> {
  const bench = await createBenchDatabase(serverUrl, 40);
  const store = new SqlEventStore(bench.db);
  let postgres: WritePath['postgres'];
  let storeRuns: WritePath['store'];
  let sealed: SealedWrites;
  try {
    log('write path: the store alone, 1 and 32 writers');
    storeRuns = {
      one: await storeAlone(store, { writers: 1, perWriter: scale.one }),
      many: await storeAlone(store, { writers: 32, perWriter: scale.perClientOf32 }),
    };
    const server = await startServer(bench.url, port);
    try {
      log('write path: commands through HTTP on PostgreSQL, 1 client, then 32, then 32 with a reader of the list, then of /healthz, then of the list at a set rate');
      const one = await commandsThroughHttp(server.base, { clients: 1, perClient: scale.one, reader: null });
      const many = await commandsThroughHttp(server.base, { clients: 32, perClient: scale.perClientOf32, reader: null });
      const reading = await commandsThroughHttp(server.base, { clients: 32, perClient: scale.perClientOf32, reader: LIST });
      // The same reader on the lightest read that still asks the database: what any read gets beside them.
      const floor = await commandsThroughHttp(server.base, { clients: 32, perClient: scale.perClientOf32, reader: '/healthz' });
      // And on a read the server answers without the database: what is left of a read beside them.
      const bare = await commandsThroughHttp(server.base, { clients: 32, perClient: scale.perClientOf32, reader: '/me' });
      // The list's reader beside writers that leave the machine headroom: what the tail owes to the cores being full.
      const paced = await commandsThroughHttp(server.base, { clients: 32, perClient: scale.perClientOf32, reader: LIST, rate: PACED_RATE });
      log('write path: answer to visible in GET /sessions, 32 clients');
      const visibility = await visibleInList(server.base, { clients: 32, perClient: scale.visibility });
      postgres = { one, many, reading, floor, bare, paced, visibility };
    } finally {
      await server.stop();
    }
    log('write path: 1 client, then 32, on two fresh databases, one server sealing its log, one not, their runs alternated');
    sealed = await measureSealedWrites(serverUrl, scale, port);
  } finally {
    await store.close();
    await bench.drop();
  }
  const dir = await mkdtemp(join(tmpdir(), 'nomos-bench-write-'));
  try {
    const server = await startServer(null, port, dir);
    try {
      log('write path: commands through HTTP on the embedded default, 1 client, then 32');
      const one = await commandsThroughHttp(server.base, { clients: 1, perClient: scale.embedded.one, reader: null });
      const many = await commandsThroughHttp(server.base, { clients: 32, perClient: scale.embedded.perClientOf32, reader: null });
      return { store: storeRuns, postgres, sealed, embedded: { one, many } };
    } finally {
      await server.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const rate = (run: { commands: number; seconds: number }) => run.commands / run.seconds;
const timedOut = (run: CommandRun) => (run.timedOut > 0 ? `; ${n(run.timedOut)} answers past NOMOS_READ_WAIT_MS!` : '');

/** The table's rows: each HTTP figure beside the store alone doing the same appends. */
export function writePathRows(w: WritePath): Row[] {
  const store = (r: StoreRun) => `${n(r.appends / r.seconds)} appends/s, p50 ${ms(r.p50)}, p99 ${ms(r.p99)} (${n(r.appends)} appends, ${s(r.seconds)})`;
  const http = (r: CommandRun) => `${n(rate(r))} commands/s, p50 ${ms(r.p50)}, p99 ${ms(r.p99)} (${n(r.commands)} commands, ${s(r.seconds)}${timedOut(r)})`;
  const { one, many, reading, floor, bare, paced, visibility } = w.postgres;
  const pauses = ({ pauses: p }: CommandRun) =>
    `; the server’s event loop meanwhile late by p99 ${ms(p.loopDelayP99)} (at most ${ms(p.loopDelayMax)}), ${p.gcPerSecond.toFixed(1)} garbage collections a second, stopping it ${ms(p.gcMsPerSecond)} a second`;
  // A reader's row: its requests' latencies, and the writers' rate and the server's pauses meanwhile.
  const readerRow = (run: CommandRun, what: string, why: string, goal?: { target: string; p99: number }): Row[] =>
    run.reads === null
      ? []
      : [
          {
            metric: `${what} (${n(run.reads.requests)} requests, one after another)${why}`,
            figure: `p50 ${ms(run.reads.p50)}, p99 ${ms(run.reads.p99)}; the 32 meanwhile ${n(rate(run))} commands/s, p99 ${ms(run.p99)}${pauses(run)}`,
            target: goal?.target ?? null,
            ...(goal && { met: run.reads.p99 <= goal.p99 }),
          },
        ];
  return [
    { metric: 'store alone, 1 writer, one event an append (SqlEventStore.append, PostgreSQL)', figure: store(w.store.one), target: null },
    { metric: 'store alone, 32 writers, one event an append, a stream each', figure: store(w.store.many), target: null },
    { metric: 'commands through HTTP, 1 client, PostgreSQL (projectors live, read-your-writes)', figure: http(one), target: 'p50 ≤ 3 ms', met: one.p50 <= 3 },
    {
      metric: 'commands through HTTP, 32 clients, PostgreSQL (projectors live, read-your-writes)',
      figure: http(many),
      target: '≥ 2 000 commands/s, p99 ≤ 50 ms',
      met: rate(many) >= 2_000 && many.p99 <= 50,
    },
    ...readerRow(reading, 'GET /sessions?limit=50 from a client process of its own while 32 write', '', { target: 'p99 ≤ 10 ms', p99: 10 }),
    ...readerRow(floor, 'GET /healthz (one statement, one row) from a client process of its own while 32 write', ": any read's share of the machine beside them"),
    ...readerRow(bare, 'GET /me (no statement: the server answers alone) from a client process of its own while 32 write', ': what a read gets beside them before it asks the database'),
    ...readerRow(paced, `GET /sessions?limit=50 from a client process of its own while 32 write ${n(PACED_RATE)} commands/s in all, paced`, ': the same read with the machine’s headroom'),
    {
      metric: `command answered → visible in GET /sessions, 32 clients (${n(visibility.commands)} commands)`,
      figure: `p50 ${ms(visibility.p50)}, p99 ${ms(visibility.p99)}; ${n(visibility.staleReads)} reads older than the client's last answer`,
      target: 'no stale read',
      met: visibility.staleReads === 0,
    },
    ...sealedWriteRows(w.sealed),
    { metric: 'commands through HTTP, 1 client, embedded default (PGlite)', figure: http(w.embedded.one), target: null },
    { metric: 'commands through HTTP, 32 clients, embedded default (PGlite)', figure: http(w.embedded.many), target: 'p99 ≤ 250 ms', met: w.embedded.many.p99 <= 250 },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { scale: { type: 'string', default: 'full' }, port: { type: 'string', default: '18093' } } });
  const scale = WRITE_PATH_SCALES[values.scale];
  if (!scale) throw new Error(`unknown scale ${values.scale}; one of ${Object.keys(WRITE_PATH_SCALES).join(', ')}`);
  const result = await measureWritePath(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres', scale, Number(values.port));
  for (const row of writePathRows(result)) console.log(`| ${row.metric} | ${row.figure} | ${row.target ?? '—'} | ${row.met === undefined ? '—' : row.met ? '✅' : '❌'} |`);
}
