// The plans projection folds a batch in memory; the generated log of batching.test.ts rarely takes the rules'
// corners, so this one does on purpose, over rows an earlier batch left: proposals of a generation already
// there or listing a step twice, updates of steps that do not exist yet or at all, goals set twice, closed
// twice or never set, and sessions deleted mid-batch (their rows kept) and then written again.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/ports/db.ts';
import type { StoredEvent } from '../../src/ports/event-store.ts';
import { getPlan, plansProjection } from '../../src/projections/plans.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { projectInBatches, SessionFeed } from './feed.ts';

const step = (generation: number, seq: number) => ({ generation, seq });
const updated = (generation: number, seq: number, status: 'running' | 'done' | 'failed') => ({ generation, seq, from: 'pending' as const, status, closed_by_task: false });
const goalSet = (goal_id: string, goal: string) => ({ goal_id, goal, title: goal });
const completed = (goal_id: string | null, outcome: 'success' | 'partial') => ({ goal_id, outcome, summary: `${outcome}!`, status: 'done' as const });

/** Events already projected (`before`) and the batch under test (`batch`), in log order. */
function scenario(): { before: StoredEvent[]; batch: StoredEvent[]; reset: SessionFeed; kept: SessionFeed; fresh: SessionFeed; gone: SessionFeed } {
  const kept = new SessionFeed(randomUUID(), '2026-08-01T10:00:00.000Z');
  const fresh = new SessionFeed(randomUUID(), '2026-08-01T11:00:00.000Z');
  const reset = new SessionFeed(randomUUID(), '2026-08-01T12:00:00.000Z');
  const gone = new SessionFeed(randomUUID(), '2026-08-01T13:00:00.000Z');
  const [done, running, again] = [randomUUID(), randomUUID(), randomUUID()];

  kept.add('PlanProposed', { generation: 1, steps: [{ seq: 1, title: 'one' }, { seq: 2, title: 'two' }, { seq: 3, title: 'three' }] });
  kept.add('GoalSet', goalSet(done, 'done goal'));
  kept.add('GoalSet', goalSet(running, 'running goal'));
  kept.add('TaskCompleted', completed(done, 'success'));
  reset.add('PlanProposed', { generation: 1, steps: [{ seq: 1, title: 'old step' }] });
  reset.add('GoalSet', goalSet(again, 'old goal'));
  gone.add('GoalSet', goalSet(randomUUID(), 'gone'));
  gone.add('PlanProposed', { generation: 1, steps: [{ seq: 1, title: 'gone step' }] });
  const before = [kept, reset, gone].flatMap((feed) => feed.events.splice(0));

  kept.add('PlanStepUpdated', updated(1, 1, 'running'));
  fresh.add('PlanStepUpdated', updated(1, 1, 'running'));
  fresh.add('PlanProposed', { generation: 1, steps: [{ seq: 1, title: 'first' }, { seq: 1, title: 'twice' }, { seq: 2, title: 'second', command: 'uptime', target: 'host:a' }] });
  reset.add('PlanStepUpdated', updated(1, 1, 'done'));
  kept.add('PlanProposed', { generation: 1, steps: [{ seq: 1, title: 'one again' }, { seq: 4, title: 'four' }] });
  kept.add('PlanStepUpdated', updated(9, 9, 'failed'));
  reset.add('SessionDeleted', { reason: null });
  gone.add('SessionDeleted', { reason: 'spam' });
  kept.add('PlanStepsReplaced', { by_generation: 2, steps: [step(1, 2), step(5, 1), step(1, 4)] });
  reset.add('PlanStepUpdated', updated(1, 1, 'failed'));
  reset.add('GoalSuperseded', { goal_id: again, superseded_by: randomUUID() });
  fresh.add('PlanStepUpdated', updated(1, 2, 'done'));
  kept.add('GoalSet', goalSet(done, 'done goal, set again'));
  kept.add('GoalSuperseded', { goal_id: done, superseded_by: running });
  kept.add('TaskCompleted', completed(running, 'partial'));
  reset.add('GoalSet', goalSet(again, 'new goal'));
  kept.add('TaskCompleted', completed(running, 'success'));
  kept.add('GoalSuperseded', { goal_id: randomUUID(), superseded_by: running });
  kept.add('TaskCompleted', completed(null, 'success'));
  reset.add('PlanProposed', { generation: 1, steps: [{ seq: 1, title: 'new step' }] });
  fresh.add('GoalSet', goalSet(again, 'same id, other session'));
  reset.add('SessionDeleted', { reason: null });
  reset.add('GoalSet', goalSet(again, 'newest goal'));
  reset.add('TaskCompleted', completed(again, 'success'));
  fresh.add('TaskCompleted', completed(again, 'partial'));
  const batch = [kept, fresh, reset, gone].flatMap((feed) => feed.events).sort((a, b) => a.position - b.position);
  return { before, batch, reset, kept, fresh, gone };
}

describe.each(databases)('plans projection, batched, on $name', (database) => {
  let t: TestDb;
  let db: Db;

  beforeAll(async () => {
    t = await database.open();
    db = t.db;
  });
  afterAll(async () => {
    await t.close();
  });

  const project = (before: readonly StoredEvent[], batch: readonly StoredEvent[], size: number) => projectInBatches(db, plansProjection, batch, size, before);

  it('gives the rows one event per transaction gives, whatever the batch size', async () => {
    const { before, batch } = scenario();
    const oneByOne = await project(before, batch, 1);
    for (const size of [2, 3, 5, batch.length]) expect(await project(before, batch, size), `batches of ${size}`).toEqual(oneByOne);
  });

  it('takes each corner of the rules as the rules say', async () => {
    const { before, batch, reset, kept, fresh, gone } = scenario();
    await project(before, batch, batch.length);

    // A deletion changes nothing here: the rows stay for audits, and later events apply to them as to any.
    const resetPlan = await getPlan(db, reset.sessionId);
    expect(resetPlan.steps.map((s) => [s.seq, s.title, s.status])).toEqual([[1, 'old step', 'failed']]);
    expect(resetPlan.goals).toMatchObject([{ goal: 'old goal', status: 'superseded', outcome: null }]);

    const keptPlan = await getPlan(db, kept.sessionId);
    expect(keptPlan.steps.map((s) => [s.seq, s.title, s.status])).toEqual([
      [1, 'one', 'running'],
      [2, 'two', 'replaced'],
      [3, 'three', 'pending'],
      [4, 'four', 'replaced'],
    ]);
    expect(keptPlan.goals).toMatchObject([
      { goal: 'done goal', status: 'completed', outcome: 'success' },
      { goal: 'running goal', status: 'completed', outcome: 'partial', summary: 'partial!' },
    ]);

    const freshPlan = await getPlan(db, fresh.sessionId);
    expect(freshPlan.steps).toMatchObject([
      { seq: 1, title: 'first', status: 'pending' },
      { seq: 2, title: 'second', command: 'uptime', target: 'host:a', status: 'done' },
    ]);
    expect(freshPlan.goals).toMatchObject([{ goal: 'same id, other session', status: 'completed', outcome: 'partial' }]);
    const gonePlan = await getPlan(db, gone.sessionId);
    expect(gonePlan.steps.map((s) => s.title)).toEqual(['gone step']);
    expect(gonePlan.goals.map((g) => g.goal)).toEqual(['gone']);
    expect((await db.query('SELECT count(*)::int AS n FROM goals')).rows).toEqual([{ n: 5 }]);
  });
});
