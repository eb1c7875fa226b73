// The verifiable log's figures: the sealer integrating the bench's loaded log into the tree, the chain check of
// `nomos verify` over it (every leaf recomputed, every root and signature checked), and the write path with the
// log sealed behind it beside the same runs without (bench/write-path.ts measures those).
import { createPublicKey } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../src/ports/db.ts';
import { generateSigningKey, writeSigningKey } from '../src/log/keys.ts';
import { Sealer } from '../src/log/sealer.ts';
import { sealState } from '../src/log/store.ts';
import { verifyChain } from '../src/log/verify-chain.ts';
import { type CommandRun, commandsThroughHttp } from './commands.ts';
import { createBenchDatabase } from './database.ts';
import { startServer } from './server.ts';
import { ms, n, type Row, s } from './table.ts';

export interface LogFigures {
  readonly sealed: { readonly events: number; readonly seconds: number };
  readonly verified: { readonly events: number; readonly seconds: number; readonly findings: number };
}

/**
 * Seals everything in `db` (one sealer, in this process), then runs the chain check over it; `settle` runs in
 * between, untimed: a nightly check meets a database that vacuum and statistics have caught up with, not one that
 * millions of rows were just written to (run.ts gives it the VACUUM ANALYZE and CHECKPOINT the reads get).
 */
export async function measureLog(db: Db, settle: () => Promise<void>): Promise<LogFigures> {
  const stop = new AbortController();
  const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM events');
  const events = Number(rows[0]!.n);
  const started = performance.now();
  const sealing = new Sealer(db, { key: generateSigningKey(), origin: null, sealMs: 5, checkpointEvery: { events: 10_000, ms: null }, batch: 5_000 }).run(stop.signal);
  for (;;) {
    if ((await sealState(db))?.size === events) break;
    await Promise.race([sealing, new Promise((resolve) => setTimeout(resolve, 20))]);
  }
  const sealed = { events, seconds: (performance.now() - started) / 1000 };
  stop.abort();
  await sealing;
  await settle();
  const began = performance.now();
  const report = await verifyChain(db, null, (pem) => createPublicKey(pem));
  return { sealed, verified: { events: report.events, seconds: (performance.now() - began) / 1000, findings: report.findings.length } };
}

export function logRows(f: LogFigures): Row[] {
  const rate = (r: { events: number; seconds: number }) => r.events / r.seconds;
  return [
    { metric: `seal the loaded log into the Merkle tree (${n(f.sealed.events)} events, one sealer, batches of 5 000)`, figure: `${n(rate(f.sealed))} events/s (${s(f.sealed.seconds)})`, target: null },
    {
      metric: `nomos verify, the chain: every leaf recomputed, every root and signature checked (${n(f.verified.events)} events)`,
      figure: `${n(rate(f.verified))} events/s (${s(f.verified.seconds)})${f.verified.findings > 0 ? `; ${f.verified.findings} findings!` : '; verified'}`,
      target: '≥ 50 000 events/s',
      met: rate(f.verified) >= 50_000 && f.verified.findings === 0,
    },
  ];
}

export interface SealedWrites {
  readonly one: { readonly sealed: CommandRun; readonly unsealed: CommandRun };
  readonly many: { readonly sealed: CommandRun; readonly unsealed: CommandRun };
}

/** Two runs of one kind as one: commands and seconds added, the p50s averaged, the worse p99. */
const together = (a: CommandRun, b: CommandRun): CommandRun => ({ ...a, commands: a.commands + b.commands, seconds: a.seconds + b.seconds, p50: (a.p50 + b.p50) / 2, p99: Math.max(a.p99, b.p99) });

/**
 * The write path's PostgreSQL runs with the log sealed behind them (a server with a signing key) beside the same
 * runs without, each server on a fresh database of its own, both up at once and their runs alternated (unsealed,
 * sealed, sealed, unsealed; each half the commands): a machine whose speed drifts over minutes (these VMs' does,
 * by ±15 %) then moves both figures alike rather than one of them.
 */
export async function measureSealedWrites(serverUrl: string, runs: { one: number; perClientOf32: number }, port: number): Promise<SealedWrites> {
  const databases = [await createBenchDatabase(serverUrl, 4), await createBenchDatabase(serverUrl, 4)] as const;
  const dir = await mkdtemp(join(tmpdir(), 'nomos-bench-seal-'));
  const servers: Awaited<ReturnType<typeof startServer>>[] = [];
  try {
    const key = join(dir, 'signing-key.pem');
    await writeSigningKey(key, generateSigningKey());
    servers.push(await startServer(databases[0].url, port));
    servers.push(await startServer(databases[1].url, port + 10, undefined, { NOMOS_SIGNING_KEY: key }));
    const [unsealed, sealed] = [servers[0]!.base, servers[1]!.base];
    const abba = async (clients: number, perClient: number) => {
      const half = { clients, perClient: Math.ceil(perClient / 2), reader: null };
      const a1 = await commandsThroughHttp(unsealed, half);
      const b1 = await commandsThroughHttp(sealed, half);
      const b2 = await commandsThroughHttp(sealed, half);
      const a2 = await commandsThroughHttp(unsealed, half);
      return { sealed: together(b1, b2), unsealed: together(a1, a2) };
    };
    return { one: await abba(1, runs.one), many: await abba(32, runs.perClientOf32) };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await Promise.all(databases.map((db) => db.drop()));
    await rm(dir, { recursive: true, force: true });
  }
}

export function sealedWriteRows(w: SealedWrites): Row[] {
  const rate = (r: CommandRun) => r.commands / r.seconds;
  const beside = ({ sealed: a, unsealed: b }: SealedWrites['one']) =>
    `${n(rate(a))} commands/s, p50 ${ms(a.p50)}, p99 ${ms(a.p99)}: ${((rate(a) / rate(b) - 1) * 100).toFixed(1)} % beside the unsealed server's ${n(rate(b))}/s (p50 ${ms(b.p50)}, p99 ${ms(b.p99)}), runs alternated`;
  const within = ({ sealed: a, unsealed: b }: SealedWrites['one']) => rate(a) >= rate(b) * 0.95;
  return [
    { metric: 'commands through HTTP, 1 client, PostgreSQL, the log sealed behind (NOMOS_SIGNING_KEY set)', figure: beside(w.one), target: 'within 5 %', met: within(w.one) },
    { metric: 'commands through HTTP, 32 clients, PostgreSQL, the log sealed behind', figure: beside(w.many), target: 'within 5 %', met: within(w.many) },
  ];
}
