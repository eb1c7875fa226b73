// Rebuilds into shadow tables: the live tables keep answering and following the log while the new version
// is built beside them; a stopped rebuild resumes where it stopped; the swap is atomic and leaves the live
// tables with their names, indexes and rows; and a new version of a projection at start-up is rebuilt by
// the server with its API answering throughout.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.ts';
import type { Db } from '../../src/ports/db.ts';
import { executeSessionCommand, startSession } from '../../src/commands/session.ts';
import type { SessionCommand } from '../../src/domain/session/commands.ts';
import { loadConfig } from '../../src/config.ts';
import type { Projection } from '../../src/projections/projection.ts';
import { hasReached, projectionStatus, rebuildProjection } from '../../src/projections/projector.ts';
import { sessionsProjection } from '../../src/projections/sessions.ts';
import { type Runtime, openRuntime, projections } from '../../src/runtime.ts';
import { databases, postgresDatabase, type TestDb } from '../support/databases.ts';

const ctx = { actor: { role: 'agent' as const, id: 'nomos' } };

async function until(what: string, probe: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A few sessions with goals, plans, tool calls and every outcome; returns the last position. */
async function populate(runtime: Runtime, count: number, tag: string): Promise<number> {
  const deps = runtime.commandDeps;
  let last = 0;
  for (let i = 0; i < count; i++) {
    const { session_id: id } = await startSession(deps, ctx);
    const cmd = async (c: SessionCommand) => (last = (await executeSessionCommand(deps, id, c, ctx)).position);
    await cmd({ type: 'post_user_message', text: `${tag} problem ${i}` });
    await cmd({ type: 'set_goal', goal: `${tag} goal ${i}` });
    await cmd({ type: 'propose_plan', steps: [{ title: 'look' }, { title: 'fix' }] });
    await cmd({ type: 'record_tool_call_requested', tool_call_id: 't1', name: 'run', args: { target: 'host:a', command: 'uptime' } });
    await cmd({ type: 'record_tool_call_completed', tool_call_id: 't1', result: { out: 'up' } });
    await cmd({ type: 'record_assistant_message', text: i % 2 ? 'done' : 'the change is queued for approval' });
    if (i % 4 !== 3) await cmd({ type: 'complete_task', outcome: (['success', 'partial', 'failed'] as const)[i % 3]!, summary: `summary ${i}` });
  }
  return last;
}

async function tableRows(db: Db, tables: readonly string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of tables) out[table] = (await db.query(`SELECT to_jsonb(t) AS row FROM ${table} t ORDER BY to_jsonb(t)::text`)).rows;
  return out;
}

/** Every index and constraint on the tables, by name and definition: a swap must keep them all. */
async function indexesOf(db: Db, tables: readonly string[]): Promise<unknown[]> {
  const { rows } = await db.query(
    `SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ANY($1) ORDER BY tablename, indexname`,
    [tables],
  );
  return rows;
}

/** Each table's storage parameters (sessions keeps room on its pages for in-place updates). */
async function storageOf(db: Db, tables: readonly string[]): Promise<unknown[]> {
  const { rows } = await db.query(
    `SELECT relname, reloptions FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname = ANY($1) AND relkind = 'r' ORDER BY relname`,
    [tables],
  );
  return rows;
}

async function leftoverSchemas(db: Db): Promise<string[]> {
  const { rows } = await db.query<{ nspname: string }>("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'nomos\\_shadow\\_%' OR nspname LIKE 'nomos\\_retired\\_%'");
  return rows.map((r) => r.nspname);
}

describe.each(databases)('shadow-table rebuilds on $name', (database) => {
  let testDb: TestDb;
  let runtime: Runtime;
  beforeAll(async () => {
    testDb = await database.open();
    let t = Date.parse('2026-07-18T09:00:00Z');
    runtime = await openRuntime(loadConfig({}), { db: testDb.db, clock: () => new Date((t += 1500)) });
    runtime.startProjectors();
  });
  afterAll(async () => {
    await runtime?.close();
    await testDb?.close();
  });

  it('builds beside the live tables, which keep answering and following the log; a stopped rebuild resumes; the swap keeps names, indexes and storage parameters', async () => {
    const deps = { store: runtime.store, db: runtime.db };
    const { tables } = sessionsProjection;
    const first = await populate(runtime, 12, 'before');
    await until('the live projections', () => hasReached(deps, runtime.projections, first));
    const liveBefore = await tableRows(runtime.db, tables);
    const indexesBefore = await indexesOf(runtime.db, tables);
    const storageBefore = await storageOf(runtime.db, tables);
    expect(storageBefore).toContainEqual({ relname: 'sessions', reloptions: ['fillfactor=90'] });
    expect(liveBefore.sessions).toHaveLength(12);

    // Stop the rebuild after its second batch, as a kill would: the shadow keeps what it built.
    const stop = new AbortController();
    let batches = 0;
    await expect(
      rebuildProjection(deps, sessionsProjection, () => (++batches === 3 ? stop.abort() : undefined), { batchSize: 10, signal: stop.signal }),
    ).rejects.toThrow();
    let [status] = await projectionStatus(deps, [sessionsProjection]);
    expect(status).toMatchObject({ state: 'rebuilding', rebuild: { version: sessionsProjection.version, position: expect.any(Number) } });
    const stoppedAt = status!.rebuild!.position;
    expect(stoppedAt).toBeGreaterThan(0);
    // The shadow holds only what it has read so far; the live tables still hold everything.
    const { rows: shadowCount } = await runtime.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM nomos_shadow_sessions.sessions`);
    expect(shadowCount[0]!.n).toBeLessThan(12);
    expect(await tableRows(runtime.db, tables)).toEqual(liveBefore);

    // Meanwhile the live tables keep following the log.
    const more = await populate(runtime, 3, 'during');
    await until('the live sessions projection during the rebuild', () => hasReached(deps, [sessionsProjection], more));
    const liveDuring = await tableRows(runtime.db, tables);
    expect(liveDuring.sessions).toHaveLength(15);

    // Resumed, it goes on from where it stopped and swaps in rows equal to the live ones.
    const progress: number[] = [];
    const result = await rebuildProjection(deps, sessionsProjection, (p) => progress.push(p.position), { batchSize: 10 });
    expect(result.resumedFrom).toBe(stoppedAt);
    expect(progress[0]).toBe(stoppedAt);
    expect(result.swapped).toBe(true);
    expect(result.events).toBeGreaterThanOrEqual(more);
    [status] = await projectionStatus(deps, [sessionsProjection]);
    expect(status).toMatchObject({ state: 'live', version: sessionsProjection.version, rebuild: null });
    expect(await tableRows(runtime.db, tables)).toEqual(liveDuring);
    expect(await indexesOf(runtime.db, tables)).toEqual(indexesBefore);
    expect(await storageOf(runtime.db, tables)).toEqual(storageBefore);
    expect(await leftoverSchemas(runtime.db)).toEqual([]);

    // And the live projector goes on from the swapped-in checkpoint: nothing doubled, nothing lost.
    const after = await populate(runtime, 2, 'after');
    await until('the live projector after the swap', () => hasReached(deps, [sessionsProjection], after));
    const { rows } = await runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions');
    expect(rows[0]!.n).toBe(17);
  });

  it('restart throws away a rebuild under way and starts from the first event', async () => {
    const deps = { store: runtime.store, db: runtime.db };
    const stop = new AbortController();
    await expect(rebuildProjection(deps, sessionsProjection, () => stop.abort(), { batchSize: 5, signal: stop.signal })).rejects.toThrow();
    const progress: number[] = [];
    const result = await rebuildProjection(deps, sessionsProjection, (p) => progress.push(p.position), { restart: true });
    expect(result.resumedFrom).toBeNull();
    expect(progress[0]).toBe(0);
    expect(result.events).toBe((await runtime.store.head()).position);
    expect(await leftoverSchemas(runtime.db)).toEqual([]);
  });
});

describe.each(databases)('a new projection version at start-up on $name', (database) => {
  let testDb: TestDb;
  let app: FastifyInstance | null = null;
  let runtime: Runtime | null = null;
  afterAll(async () => {
    await app?.close();
    await runtime?.close();
    await testDb?.close();
  });

  it('is rebuilt by the server while the API answers from the old rows throughout, then swapped in', async () => {
    testDb = await database.open();
    const old = await openRuntime(loadConfig({}), { db: testDb.db });
    old.startProjectors();
    const last = await populate(old, 40, 'fleet');
    await until('the old version', () => hasReached({ store: old.store, db: old.db }, old.projections, last));
    await old.close();

    // The next release changes the blocker rules: blockers are now written in capitals. Its apply is slowed
    // down so the rebuild is long enough to be watched.
    const next: Projection = {
      ...sessionsProjection,
      version: sessionsProjection.version + 1,
      async applyBatch(tx, events) {
        for (const event of events) {
          await sessionsProjection.applyBatch(tx, [event]);
          await new Promise((r) => setTimeout(r, 5));
          await tx.query('UPDATE sessions SET blocker = upper(blocker) WHERE id = $1 AND blocker IS NOT NULL', [event.streamName.replace(/^session-/, '')]);
        }
      },
    };
    runtime = await openRuntime(loadConfig({}), { db: testDb.db, projections: projections.map((p) => (p.name === next.name ? next : p)) });
    app = await buildApp({ runtime, readWaitMs: 2_000, bodyLimit: 1_048_576, tokens: [] });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const rebuilds: string[] = [];
    runtime.startProjectors(undefined, { onRebuild: (name, event) => rebuilds.push(`${name}:${event.phase}`) });

    const states = new Set<string>();
    const blockers = new Set<string>();
    for (let polls = 0; ; polls++) {
      const sessions = await fetch(`${url}/sessions?limit=100`);
      expect(sessions.status).toBe(200);
      const body = (await sessions.json()) as { sessions: Array<{ blocker: string | null }> };
      expect(body.sessions).toHaveLength(40);
      for (const s of body.sessions) if (s.blocker) blockers.add(s.blocker === s.blocker.toUpperCase() ? 'new' : 'old');
      const { projections: status } = (await (await fetch(`${url}/projections`)).json()) as { projections: Array<{ name: string; state: string; version: number }> };
      const sessions_ = status.find((p) => p.name === 'sessions')!;
      states.add(sessions_.state);
      if (sessions_.state === 'live' && sessions_.version === next.version) break;
      if (polls > 2_000) throw new Error('the rebuild never swapped in');
      await new Promise((r) => setTimeout(r, 10));
    }
    // It was watched rebuilding while the old rows answered, then the new rules answered.
    expect(states).toEqual(new Set(['rebuilding', 'live']));
    expect(blockers.has('old')).toBe(true);
    const final = (await (await fetch(`${url}/sessions?limit=100`)).json()) as { sessions: Array<{ blocker: string | null }> };
    const withBlocker = final.sessions.filter((s) => s.blocker !== null);
    expect(withBlocker.length).toBeGreaterThan(0);
    expect(withBlocker.every((s) => s.blocker === s.blocker!.toUpperCase())).toBe(true);
    // The report comes after the commit (and the retired tables' drop), so a poll may see the swap first.
    await until('the swapped report', () => Promise.resolve(rebuilds.length >= 2));
    expect(rebuilds).toEqual(['sessions:started', 'sessions:swapped']);
  }, 60_000);
});

describe.runIf(postgresDatabase !== null)('the swap and long readers on postgres (PGlite has one connection: no concurrent readers)', () => {
  let testDb: TestDb;
  let runtime: Runtime;
  beforeAll(async () => {
    testDb = await postgresDatabase!.open();
    runtime = await openRuntime(loadConfig({}), { db: testDb.db });
    runtime.startProjectors();
  });
  afterAll(async () => {
    await runtime?.close();
    await testDb?.close();
  });

  it('waits for a reader holding the live tables instead of aborting it, then swaps', async () => {
    const deps = { store: runtime.store, db: runtime.db };
    const last = await populate(runtime, 3, 'reader');
    await until('the live projections', () => hasReached(deps, runtime.projections, last));
    const reader = new pg.Client({ connectionString: testDb.url! });
    await reader.connect();
    try {
      // A reader inside a transaction that has read sessions and now reads the tool counts, as a report might.
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM sessions');
      let swapped = false;
      const rebuild = rebuildProjection(deps, sessionsProjection).then((r) => ((swapped = r.swapped), r));
      await new Promise((r) => setTimeout(r, 1_500));
      expect(swapped).toBe(false); // still waiting: the reader holds the live table
      const { rows } = await reader.query<{ n: string }>('SELECT count(*) AS n FROM session_tool_counts');
      expect(Number(rows[0]!.n)).toBeGreaterThan(0);
      await reader.query('COMMIT'); // the reader finished without an error...
      const result = await rebuild; // ...and then the swap went through
      expect(result.swapped).toBe(true);
    } finally {
      await reader.end();
    }
    const [status] = await projectionStatus(deps, [sessionsProjection]);
    expect(status).toMatchObject({ state: 'live', lag: 0 });
  });

  it("keeps the grants of the live tables (an auditors' role reading the read models directly)", async () => {
    const deps = { store: runtime.store, db: runtime.db };
    const role = `nomos_auditor_${Date.now().toString(36)}`;
    await runtime.db.query(`CREATE ROLE ${role} NOLOGIN`);
    try {
      await runtime.db.query(`GRANT SELECT ON sessions, session_entities TO ${role}`);
      await rebuildProjection(deps, sessionsProjection, undefined, { restart: true });
      const privilege = async (table: string, what: string) =>
        (await runtime.db.query<{ ok: boolean }>('SELECT has_table_privilege($1, $2, $3) AS ok', [role, table, what])).rows[0]!.ok;
      expect(await privilege('sessions', 'SELECT')).toBe(true);
      expect(await privilege('session_entities', 'SELECT')).toBe(true);
      expect(await privilege('session_tool_counts', 'SELECT')).toBe(false);
      expect(await privilege('sessions', 'UPDATE')).toBe(false);
    } finally {
      await runtime.db.query(`DROP OWNED BY ${role}`);
      await runtime.db.query(`DROP ROLE ${role}`);
    }
  });
});
