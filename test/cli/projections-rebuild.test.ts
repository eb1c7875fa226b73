// `nomos projections rebuild sessions` as an operator runs it: the real CLI in a child process, killed with
// SIGKILL once it has committed part of the rebuild, leaves the live tables untouched and its shadow in place;
// run again, it resumes from where the killed run stopped, not from the first event, and swaps in rows equal
// to the ones built live.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/ports/db.ts';
import { SqlEventStore } from '../../src/adapters/eventstore/sql.ts';
import { Projector, projectionStatus } from '../../src/projections/projector.ts';
import { sessionsProjection } from '../../src/projections/sessions.ts';
import { shadowSchema } from '../../src/projections/shadow.ts';
import { sessions } from '../../bench/generator.ts';
import { Rng } from '../../bench/prng.ts';
import { type TestDb, postgresDatabase } from '../support/databases.ts';

const BIN = fileURLToPath(new URL('../../bin/nomos.mjs', import.meta.url));
// Enough events, applied 20 per transaction by the first run (--batch-size), that it commits hundreds of
// batches over a second or more, so the kill lands well before it ends; the suite fails, rather than passes,
// if it ever does not.
const LOG_EVENTS = 8_000;
const DAY = 86_400_000;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `nomos ARGS` against the test database; `exit` settles when the process has ended, however it ended. */
function nomos(args: string[], databaseUrl: string): { child: ChildProcess; exit: Promise<Exit> } {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<Exit>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, exit };
}

/** Every row of the sessions projection's tables, every column, in a total order. */
async function sessionRows(db: Db): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of sessionsProjection.tables) out[table] = (await db.query(`SELECT to_jsonb(t) AS row FROM ${table} t ORDER BY to_jsonb(t)::text`)).rows;
  return out;
}

async function rebuildRow(db: Db): Promise<{ pos: number; events: number } | null> {
  const { rows } = await db.query<{ pos: string; events: string }>('SELECT pos, events FROM projection_rebuilds WHERE name = $1', [sessionsProjection.name]);
  return rows[0] ? { pos: Number(rows[0].pos), events: Number(rows[0].events) } : null;
}

async function schemasLike(db: Db, pattern: string): Promise<string[]> {
  const { rows } = await db.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1 ORDER BY nspname', [pattern]);
  return rows.map((r) => r.nspname);
}

describe.runIf(postgresDatabase !== null)('nomos projections rebuild, killed and run again (needs DATABASE_URL: the CLI is a second process, and PGlite admits one)', () => {
  let testDb: TestDb;
  let store: SqlEventStore;
  let logEvents = 0;
  let live: Record<string, unknown[]>;
  let running: ChildProcess | null = null;

  beforeAll(async () => {
    testDb = await postgresDatabase!.open();
    store = new SqlEventStore(testDb.db);
    // A fixed window and seed: the same log every run. Each session goes in as one append, only to load fast.
    const from = Date.parse('2026-06-01T00:00:00Z');
    const source = sessions(new Rng(20260718), { from, to: from + 30 * DAY, count: 1_000 });
    while (logEvents < LOG_EVENTS) {
      const session = source.next().value!;
      await store.append(session.stream, session.appends.flat(), { expectedVersion: 'no_stream' });
      logEvents += session.events;
    }
    await new Projector({ store, db: testDb.db }, sessionsProjection).catchUp();
    live = await sessionRows(testDb.db);
  }, 60_000);

  afterAll(async () => {
    running?.kill('SIGKILL');
    await store?.close();
    await testDb?.close();
  });

  it('resumes a rebuild killed mid-way where it stopped, and swaps in rows equal to the live ones', async () => {
    expect(live.sessions!.length).toBeGreaterThan(100);
    expect((await store.head()).position).toBe(logEvents);

    // First run: killed as soon as it has committed a batch into the shadow tables.
    const first = nomos(['projections', 'rebuild', 'sessions', '--batch-size', '20'], testDb.url!);
    running = first.child;
    let ended = false;
    void first.exit.finally(() => (ended = true));
    let killedAt = 0;
    const deadline = Date.now() + 30_000;
    while (killedAt === 0) {
      // Checked before the row: a rebuild that ended (swapped in, or failed) before the kill proves nothing.
      if (ended) {
        const { code, stdout, stderr } = await first.exit;
        throw new Error(`the rebuild ended (exit ${code}) before it could be killed: the log is too small for this machine\n${stdout}${stderr}`);
      }
      if (Date.now() > deadline) throw new Error('the rebuild committed no batch within 30 s');
      const row = await rebuildRow(testDb.db);
      if (row && row.pos > 0) {
        first.child.kill('SIGKILL');
        killedAt = row.pos;
      } else {
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    const killed = await first.exit;
    running = null;
    expect(killed.signal).toBe('SIGKILL');
    expect(killed.stdout).not.toContain('rebuilt from');

    // What the kill left: the rebuild row at that position (or one batch committed just before the kill
    // took effect), its shadow schema, and live tables that never saw any of it.
    const left = await rebuildRow(testDb.db);
    expect(left, 'the rebuild row is gone: the rebuild finished before it was killed').not.toBeNull();
    expect(left!.pos).toBeGreaterThanOrEqual(killedAt);
    expect(left!.pos).toBeLessThan(logEvents);
    expect(await schemasLike(testDb.db, shadowSchema(sessionsProjection))).toEqual([shadowSchema(sessionsProjection)]);
    const [status] = await projectionStatus({ store, db: testDb.db }, [sessionsProjection]);
    expect(status).toMatchObject({ state: 'rebuilding', position: logEvents, lag: 0, rebuild: { position: left!.pos } });
    expect(await sessionRows(testDb.db)).toEqual(live);

    // Second run: to completion, from where the first stopped.
    const second = nomos(['projections', 'rebuild', 'sessions'], testDb.url!);
    running = second.child;
    const done = await second.exit;
    running = null;
    expect(done.code, done.stderr).toBe(0);
    const summary = /^sessions: rebuilt from (\d+) events \(resumed from position (\d+)\) in [\d.]+ s, \S+ events\/s; swapped in$/m.exec(done.stdout);
    expect(summary, done.stdout).not.toBeNull();
    const resumedFrom = Number(summary![2]);
    expect(resumedFrom).toBeGreaterThan(0);
    expect(resumedFrom).toBeGreaterThanOrEqual(left!.pos);
    // Events are counted across both runs, each once: the batch the kill cut short is not counted twice.
    expect(Number(summary![1])).toBe(logEvents);

    expect(await rebuildRow(testDb.db)).toBeNull();
    expect(await schemasLike(testDb.db, 'nomos\\_shadow\\_%')).toEqual([]);
    expect(await schemasLike(testDb.db, 'nomos\\_retired\\_%')).toEqual([]);
    expect(await sessionRows(testDb.db)).toEqual(live);
    const [after] = await projectionStatus({ store, db: testDb.db }, [sessionsProjection]);
    expect(after).toMatchObject({ state: 'live', version: sessionsProjection.version, position: logEvents, lag: 0, rebuild: null });
  }, 90_000);
});
