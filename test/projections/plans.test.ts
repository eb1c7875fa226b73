// The plans read model on real databases: every plan generation with its steps' statuses, and every goal
// of a multi-goal session with its own outcome.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/ports/db.ts';
import { getPlan, plansProjection } from '../../src/projections/plans.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { applyEvents, SessionFeed } from './feed.ts';

describe.each(databases)('plans projection on $name', (database) => {
  let t: TestDb;
  let db: Db;
  const project = (feed: SessionFeed) => applyEvents(db, plansProjection, feed.events.splice(0));

  beforeAll(async () => {
    t = await database.open();
    db = t.db;
  });
  afterAll(async () => {
    await t.close();
  });

  function started(at: string): SessionFeed {
    const id = randomUUID();
    const feed = new SessionFeed(id, at);
    feed.add('SessionStarted', { session_id: id }, { at });
    return feed;
  }

  it('keeps every generation: replaced steps stay visible beside the current plan', async () => {
    const feed = started('2026-07-18T09:45:00.000Z');
    feed.add('PlanProposed', {
      generation: 1,
      steps: [
        { seq: 1, title: 'Inspect exports on strong', command: 'exportfs -v', target: 'host:strong' },
        { seq: 2, title: 'Export ludo-lvm to ZimaOS' },
        { seq: 3, title: 'Mount it in ZimaOS', target: 'vm:zimaos' },
      ],
    });
    feed.add('PlanStepUpdated', { generation: 1, seq: 1, from: 'pending', status: 'running', closed_by_task: false });
    feed.add('PlanStepUpdated', { generation: 1, seq: 1, from: 'running', status: 'done', closed_by_task: false }, { at: '2026-07-18T09:50:00.000Z' });
    feed.add('PlanStepsReplaced', { by_generation: 2, steps: [{ generation: 1, seq: 2 }, { generation: 1, seq: 3 }] }, { at: '2026-07-18T09:55:00.000Z' });
    feed.add('PlanProposed', { generation: 2, steps: [{ seq: 1, title: 'Drop the redundant /media/media mount', target: 'vm:zimaos' }] });
    await project(feed);

    const plan = await getPlan(db, feed.sessionId);
    expect(plan.current_generation).toBe(2);
    expect(plan.steps).toEqual([
      { generation: 1, seq: 1, title: 'Inspect exports on strong', command: 'exportfs -v', target: 'host:strong', status: 'done', updated_at: '2026-07-18T09:50:00.000Z' },
      { generation: 1, seq: 2, title: 'Export ludo-lvm to ZimaOS', command: null, target: null, status: 'replaced', updated_at: '2026-07-18T09:55:00.000Z' },
      { generation: 1, seq: 3, title: 'Mount it in ZimaOS', command: null, target: 'vm:zimaos', status: 'replaced', updated_at: '2026-07-18T09:55:00.000Z' },
      { generation: 2, seq: 1, title: 'Drop the redundant /media/media mount', command: null, target: 'vm:zimaos', status: 'pending', updated_at: '2026-07-18T09:55:01.000Z' },
    ]);
    expect(plan.goals).toEqual([]);
  });

  it('gives each goal of a multi-goal session its own outcome, and a superseded goal none', async () => {
    const feed = started('2026-07-15T22:22:00.000Z');
    const audit = randomUUID();
    const pivot = randomUUID();
    const upgrade = randomUUID();
    feed.add('GoalSet', { goal_id: audit, goal: 'Fleet-wide update audit by criticality', title: 'Fleet-wide update audit by criticality' }, { at: '2026-07-15T22:23:00.000Z' });
    feed.add('TaskCompleted', { goal_id: audit, outcome: 'success', summary: 'audit presented', status: 'done' }, { at: '2026-07-15T22:30:00.000Z' });
    feed.add('SessionReopened', { previous_status: 'done' });
    feed.add('GoalSet', { goal_id: pivot, goal: 'Upgrade every host', title: 'Upgrade every host' }, { at: '2026-07-15T22:31:00.000Z' });
    feed.add('GoalSuperseded', { goal_id: pivot, superseded_by: upgrade }, { at: '2026-07-15T22:32:00.000Z' });
    feed.add('GoalSet', { goal_id: upgrade, goal: 'Deploy 92 pending packages to host:netbird-vps', title: 'Deploy 92 pending packages to host:netbird-vps' });
    feed.add('TaskCompleted', { goal_id: upgrade, outcome: 'partial', summary: '92→0 pending; netbird-mgmt needed a restart', status: 'done' }, { at: '2026-07-15T23:10:00.000Z' });
    await project(feed);

    const { goals, current_generation, steps } = await getPlan(db, feed.sessionId);
    expect(current_generation).toBeNull();
    expect(steps).toEqual([]);
    expect(goals).toEqual([
      { goal_id: audit, goal: 'Fleet-wide update audit by criticality', status: 'completed', outcome: 'success', summary: 'audit presented', set_at: '2026-07-15T22:23:00.000Z', closed_at: '2026-07-15T22:30:00.000Z' },
      { goal_id: pivot, goal: 'Upgrade every host', status: 'superseded', outcome: null, summary: null, set_at: '2026-07-15T22:31:00.000Z', closed_at: '2026-07-15T22:32:00.000Z' },
      {
        goal_id: upgrade,
        goal: 'Deploy 92 pending packages to host:netbird-vps',
        status: 'completed',
        outcome: 'partial',
        summary: '92→0 pending; netbird-mgmt needed a restart',
        set_at: '2026-07-15T22:32:01.000Z',
        closed_at: '2026-07-15T23:10:00.000Z',
      },
    ]);
  });

  it('leaves an open goal open while the task runs, and a task without a goal closes nothing', async () => {
    const feed = started('2026-07-19T08:00:00.000Z');
    const goal = randomUUID();
    feed.add('TaskCompleted', { goal_id: null, outcome: 'success', summary: 'greeting', status: 'done' });
    feed.add('GoalSet', { goal_id: goal, goal: 'Inspect the rclone timer', title: 'Inspect the rclone timer' });
    await project(feed);
    expect((await getPlan(db, feed.sessionId)).goals).toMatchObject([{ goal_id: goal, status: 'open', outcome: null, closed_at: null }]);
  });

  it('keeps a deleted session’s plan and goals for audits', async () => {
    const feed = started('2026-07-19T09:00:00.000Z');
    feed.add('GoalSet', { goal_id: randomUUID(), goal: 'x', title: 'x' });
    feed.add('PlanProposed', { generation: 1, steps: [{ seq: 1, title: 'only step' }] });
    feed.add('SessionDeleted', { reason: null });
    await project(feed);
    const plan = await getPlan(db, feed.sessionId);
    expect(plan.current_generation).toBe(1);
    expect(plan.steps.map((s) => s.title)).toEqual(['only step']);
    expect(plan.goals.map((g) => g.goal)).toEqual(['x']);
  });
});
