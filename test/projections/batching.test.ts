// A projection folds a batch of events in memory and writes each changed row once; its rows must come out
// exactly as when the same events arrive one per transaction (how the live projector often sees them, and how
// the projection suites feed them). Checked for every projection on a generated log that holds every outcome
// and blocker, reopened sessions and deleted ones, with batch sizes that cut sessions anywhere.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/ports/event-store.ts';
import { deleteSession } from '../../src/commands/session.ts';
import { loadConfig } from '../../src/config.ts';
import { type Runtime, openRuntime } from '../../src/runtime.ts';
import { appendSessions } from '../../bench/append.ts';
import { sessions } from '../../bench/generator.ts';
import { Rng } from '../../bench/prng.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { wholeLog } from '../support/log.ts';
import { recordTurn } from '../support/model-calls.ts';
import { projectInBatches } from './feed.ts';

const DAY = 86_400_000;

describe.each(databases)('batched application on $name', (database) => {
  let testDb: TestDb;
  let runtime: Runtime;
  let log: StoredEvent[] = [];

  beforeAll(async () => {
    testDb = await database.open();
    runtime = await openRuntime(loadConfig({}), { db: testDb.db });
    const generated = sessions(new Rng(20261129), { from: Date.parse('2026-11-01T00:00:00Z'), to: Date.parse('2026-11-01T00:00:00Z') + 7 * DAY, count: 120 });
    await appendSessions(runtime.store, generated, { writers: 1, untilEvents: 6_000, perCommand: false });
    // Model calls (the generator writes none, as a log from before they were recorded): a few sessions' turns,
    // failed calls and unreported tokens among them, and one in a session deleted next.
    const some = (await runtime.db.query<{ stream_name: string }>(`SELECT DISTINCT stream_name FROM events WHERE type = 'SessionStarted' ORDER BY stream_name LIMIT 6`)).rows;
    for (const [i, { stream_name }] of some.entries()) {
      await recordTurn(runtime.commandDeps, stream_name.replace(/^session-/, ''), [
        { input_tokens: 1_000 + i, output_tokens: i === 2 ? null : 50 },
        ...(i % 2 === 0 ? [{ input_tokens: null, output_tokens: null, cached_input_tokens: null, error: { kind: 'http', status: 429, code: null, message: 'slow down' } }] : []),
      ]);
    }
    // Deleted sessions: the generator deletes rarely, so delete a few outright.
    const started = (await runtime.db.query<{ stream_name: string }>(`SELECT DISTINCT stream_name FROM events WHERE type = 'SessionStarted' ORDER BY stream_name LIMIT 3`)).rows;
    for (const { stream_name } of started) {
      await deleteSession(runtime.commandDeps, stream_name.replace(/^session-/, ''), 'test', { actor: { role: 'operator', id: 'test' } });
    }
    log = await wholeLog(runtime.store);
  }, 60_000);
  afterAll(async () => {
    await runtime?.close();
    await testDb?.close();
  });

  it('draws on a log with every path the rules take', () => {
    const types = new Set(log.map((e) => e.type));
    for (const type of ['SessionDeleted', 'SessionReopened', 'ApprovalExpired', 'ApprovalDenied', 'ApprovalCancelled', 'TurnFailed', 'ExecutionRefused', 'ExecutionTimedOut', 'PlanStepsReplaced', 'GoalSuperseded', 'ModelCallRecorded']) {
      expect(types, type).toContain(type);
    }
  });

  it("a started session's row holds the sessions table's column defaults", async () => {
    const sessions = runtime.projections.find((p) => p.name === 'sessions')!;
    const started = log.find((e) => e.type === 'SessionStarted')!;
    await projectInBatches(runtime.db, sessions, [started], 1);
    const projected = (await runtime.db.query<{ row: Record<string, unknown> }>('SELECT to_jsonb(s) AS row FROM sessions s')).rows;
    expect(projected).toHaveLength(1);
    // owner is the event's, not a default.
    const { id, created_at, owner } = projected[0]!.row;
    await runtime.db.query('DELETE FROM sessions');
    const defaults = await runtime.db.query(`INSERT INTO sessions (id, status, created_at, last_active_at, owner) VALUES ($1, 'active', $2, $2, $3) RETURNING to_jsonb(sessions) AS row`, [
      id,
      created_at,
      owner,
    ]);
    expect(projected).toEqual(defaults.rows);
  });

  for (const name of ['sessions', 'transcript', 'plans', 'executions', 'model_calls']) {
    it(`${name}: one event per transaction, batches of 7, 250 and the whole log give the same rows`, async () => {
      const projection = runtime.projections.find((p) => p.name === name)!;
      const oneByOne = await projectInBatches(runtime.db, projection, log, 1);
      expect(Object.values(oneByOne).some((rows) => rows.length > 0)).toBe(true);
      for (const size of [7, 250, log.length]) expect(await projectInBatches(runtime.db, projection, log, size), `batches of ${size}`).toEqual(oneByOne);
    }, 120_000);
  }
});
