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

/** Seals everything in `db` (one sealer, in this process), then runs the chain check over it. */
export async function measureLog(db: Db): Promise<LogFigures> {
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
  readonly one: CommandRun;
  readonly many: CommandRun;
}

/** The write path's PostgreSQL runs again on a fresh database, with a signing key: the log sealed behind them. */
export async function measureSealedWrites(serverUrl: string, runs: { one: number; perClientOf32: number }, port: number): Promise<SealedWrites> {
  const bench = await createBenchDatabase(serverUrl, 4);
  const dir = await mkdtemp(join(tmpdir(), 'nomos-bench-seal-'));
  try {
    const key = join(dir, 'signing-key.pem');
    await writeSigningKey(key, generateSigningKey());
    const server = await startServer(bench.url, port, undefined, { NOMOS_SIGNING_KEY: key });
    try {
      const one = await commandsThroughHttp(server.base, { clients: 1, perClient: runs.one, reader: null });
      const many = await commandsThroughHttp(server.base, { clients: 32, perClient: runs.perClientOf32, reader: null });
      return { one, many };
    } finally {
      await server.stop();
    }
  } finally {
    await bench.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

export function sealedWriteRows(sealed: SealedWrites, unsealed: { one: CommandRun; many: CommandRun }): Row[] {
  const rate = (r: CommandRun) => r.commands / r.seconds;
  const beside = (a: CommandRun, b: CommandRun) => `${n(rate(a))} commands/s, p50 ${ms(a.p50)}, p99 ${ms(a.p99)}: ${((rate(a) / rate(b) - 1) * 100).toFixed(1)} % beside the unsealed run's ${n(rate(b))}/s`;
  const within = (a: CommandRun, b: CommandRun) => rate(a) >= rate(b) * 0.95;
  return [
    { metric: 'commands through HTTP, 1 client, PostgreSQL, the log sealed behind (NOMOS_SIGNING_KEY set)', figure: beside(sealed.one, unsealed.one), target: 'within 5 %', met: within(sealed.one, unsealed.one) },
    { metric: 'commands through HTTP, 32 clients, PostgreSQL, the log sealed behind', figure: beside(sealed.many, unsealed.many), target: 'within 5 %', met: within(sealed.many, unsealed.many) },
  ];
}
