// Several servers on one PostgreSQL: exactly one runs each projector; when it is killed, another takes over
// within seconds, and nothing is lost or doubled. The first server is a real `nomos serve` process, killed
// with SIGKILL.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresDb } from '../../src/adapters/db/postgres.ts';
import { executeSessionCommand, startSession } from '../../src/commands/session.ts';
import { loadConfig } from '../../src/config.ts';
import { hasReached } from '../../src/projections/projector.ts';
import { type Runtime, openRuntime } from '../../src/runtime.ts';
import { type TestDb, postgresDatabase } from '../support/databases.ts';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

async function until(what: string, probe: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.runIf(postgresDatabase !== null)('projector leadership across servers (needs DATABASE_URL: PGlite is one process)', () => {
  let testDb: TestDb;
  let child: ChildProcess | null = null;
  let standby: Runtime;
  let port: number;

  beforeAll(async () => {
    testDb = await postgresDatabase!.open();
    port = await freePort();
    child = spawn(process.execPath, ['bin/nomos.mjs', 'serve'], { env: { ...process.env, DATABASE_URL: testDb.url!, PORT: String(port), HOST: '127.0.0.1' }, stdio: 'ignore' });
    await until('the first server', async () => {
      const res = await fetch(`http://127.0.0.1:${port}/projections`).catch(() => null);
      if (!res?.ok) return false;
      const body = (await res.json()) as { projections: Array<{ leader: boolean }> };
      return body.projections.length > 0 && body.projections.every((p) => p.leader);
    }, 40_000);
    standby = await openRuntime(loadConfig({}), { db: postgresDb(testDb.url!) });
    standby.startProjectors(undefined, { leaseRetryMs: 200 });
  }, 60_000);

  afterAll(async () => {
    child?.kill('SIGKILL');
    await standby?.close();
    await standby?.db.close();
    await testDb?.close();
  });

  it('runs each projector on one server only, and moves it to the other when the holder is killed', async () => {
    await new Promise((r) => setTimeout(r, 600));
    expect(standby.leading()).toEqual([]);

    const deps = standby.commandDeps;
    const ctx = { actor: { role: 'agent' as const, id: 'nomos' } };
    const write = async (n: number) => {
      let last = 0;
      for (let i = 0; i < n; i++) {
        const { session_id: id } = await startSession(deps, ctx);
        for (let k = 0; k < 3; k++) {
          await executeSessionCommand(deps, id, { type: 'record_tool_call_requested', tool_call_id: `t${k}`, name: 'run', args: { target: 'host:strong' } }, ctx);
          last = (await executeSessionCommand(deps, id, { type: 'record_tool_call_completed', tool_call_id: `t${k}`, result: 'ok' }, ctx)).position;
        }
      }
      return last;
    };
    const reached = (position: number) => () => hasReached({ store: standby.store, db: standby.db }, standby.projections, position);

    const first = await write(5);
    await until('the first server to project', reached(first));
    expect(standby.leading()).toEqual([]);

    child!.kill('SIGKILL');
    await until('the standby to take over every projection', () => standby.leading().length === standby.projections.length, 15_000);

    const second = await write(5);
    await until('the standby to project', reached(second));
    const { rows } = await standby.db.query<{ sessions: number; calls: number; counted: number }>(
      'SELECT count(*)::int AS sessions, (SELECT count(*)::int FROM tool_calls) AS calls, sum(tool_call_count)::int AS counted FROM sessions',
    );
    // Nothing lost (every session and call is there) and nothing doubled (the aggregates count each call once).
    expect(rows[0]).toEqual({ sessions: 10, calls: 30, counted: 30 });
  }, 90_000);
});
