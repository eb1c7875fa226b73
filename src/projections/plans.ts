// The plans read model: every generation of a session's plan with each step's status, and every goal the
// session had with its own outcome, so a multi-goal session keeps the result of each.
//
//   PlanProposed       inserts the generation's steps as pending
//   PlanStepsReplaced  marks the listed steps replaced
//   PlanStepUpdated    sets the step's status
//   GoalSet            inserts the goal as open
//   GoalSuperseded     closes the goal as superseded
//   TaskCompleted      closes the task's goal as completed, with the outcome and summary
//   SessionDeleted     drops the session's steps and goals
import { z } from 'zod';
import type { Queryable } from '../adapters/db/db.ts';
import { Outcome, type SessionEvent, StepStatus } from '../domain/session/events.ts';
import { eachEvent, type Projection } from './projection.ts';
import { isoOrNull, occurredAt, onSessionEvents, pgJson } from './rows.ts';

const PLANS_VERSION = 1;

async function applyEvent(tx: Queryable, sessionId: string, e: SessionEvent, at: string, position: number): Promise<void> {
  switch (e.type) {
    case 'PlanProposed': {
      const steps = e.data.steps.map((s) => ({ seq: s.seq, title: s.title, command: s.command ?? null, target: s.target ?? null }));
      await tx.query(
        `INSERT INTO plan_steps (session_id, generation, seq, title, command, target, status, updated_at)
         SELECT $1, $2, s.seq, s.title, s.command, s.target, 'pending', $3
         FROM jsonb_to_recordset($4::jsonb) AS s(seq integer, title text, command text, target text)
         ON CONFLICT (session_id, generation, seq) DO NOTHING`,
        [sessionId, e.data.generation, at, pgJson(steps)],
      );
      return;
    }
    case 'PlanStepsReplaced':
      await tx.query(
        `UPDATE plan_steps p SET status = 'replaced', updated_at = $2
         FROM jsonb_to_recordset($3::jsonb) AS r(generation integer, seq integer)
         WHERE p.session_id = $1 AND p.generation = r.generation AND p.seq = r.seq`,
        [sessionId, at, pgJson(e.data.steps)],
      );
      return;
    case 'PlanStepUpdated':
      await tx.query('UPDATE plan_steps SET status = $4, updated_at = $5 WHERE session_id = $1 AND generation = $2 AND seq = $3', [
        sessionId,
        e.data.generation,
        e.data.seq,
        e.data.status,
        at,
      ]);
      return;
    case 'GoalSet':
      await tx.query(
        `INSERT INTO goals (session_id, goal_id, goal, status, set_at, event_position) VALUES ($1, $2, $3, 'open', $4, $5)
         ON CONFLICT (session_id, goal_id) DO NOTHING`,
        [sessionId, e.data.goal_id, e.data.goal, at, position],
      );
      return;
    case 'GoalSuperseded':
      await tx.query(`UPDATE goals SET status = 'superseded', closed_at = $3 WHERE session_id = $1 AND goal_id = $2 AND status = 'open'`, [
        sessionId,
        e.data.goal_id,
        at,
      ]);
      return;
    case 'TaskCompleted':
      // A task completed without a goal (none was set) leaves no goal to close.
      if (e.data.goal_id === null) return;
      await tx.query(
        `UPDATE goals SET status = 'completed', outcome = $3, summary = $4, closed_at = $5
         WHERE session_id = $1 AND goal_id = $2 AND status = 'open'`,
        [sessionId, e.data.goal_id, e.data.outcome, e.data.summary, at],
      );
      return;
    case 'SessionDeleted':
      await tx.query('DELETE FROM plan_steps WHERE session_id = $1', [sessionId]);
      await tx.query('DELETE FROM goals WHERE session_id = $1', [sessionId]);
      return;
    case 'SessionStarted':
    case 'SessionReopened':
    case 'UserMessagePosted':
    case 'AssistantMessageRecorded':
    case 'ToolCallRequested':
    case 'ToolCallCompleted':
    case 'ApprovalRequested':
    case 'ApprovalGranted':
    case 'ApprovalDenied':
    case 'ApprovalExpired':
    case 'ApprovalCancelled':
    case 'TurnFailed':
    case 'TurnStarted':
    case 'TurnCancelRequested':
    case 'TurnEnded':
    case 'ExecutionRequested':
    case 'ExecutionRefused':
    case 'ExecutionStarted':
    case 'ExecutionSucceeded':
    case 'ExecutionFailed':
    case 'ExecutionTimedOut':
    case 'AssentOpened':
    case 'AssentClosed':
      return; // not part of the plan
    default: {
      const unhandled: never = e;
      throw new Error(`plans projection: unhandled event ${JSON.stringify(unhandled)}`);
    }
  }
}

export const plansProjection: Projection = {
  name: 'plans',
  version: PLANS_VERSION,
  tables: ['plan_steps', 'goals'],
  handles: new Set(['PlanProposed', 'PlanStepsReplaced', 'PlanStepUpdated', 'GoalSet', 'GoalSuperseded', 'TaskCompleted', 'SessionDeleted']),
  applyBatch: eachEvent(onSessionEvents((tx, sessionId, event, stored) => applyEvent(tx, sessionId, event, occurredAt(stored), stored.position))),
};

// ---- queries ----

export interface PlanStepView {
  generation: number;
  seq: number;
  title: string;
  command: string | null;
  target: string | null;
  status: StepStatus;
  updated_at: string;
}

export interface GoalView {
  goal_id: string;
  goal: string;
  status: 'open' | 'superseded' | 'completed';
  outcome: Outcome | null;
  summary: string | null;
  set_at: string;
  closed_at: string | null;
}

const StepRow = z.object({
  generation: z.number().int(),
  seq: z.number().int(),
  title: z.string(),
  command: z.string().nullable(),
  target: z.string().nullable(),
  status: StepStatus,
  updated_at: z.date(),
});

const GoalRow = z.object({
  goal_id: z.string(),
  goal: z.string(),
  status: z.enum(['open', 'superseded', 'completed']),
  outcome: Outcome.nullable(),
  summary: z.string().nullable(),
  set_at: z.date(),
  closed_at: z.date().nullable(),
});

/** Steps of every generation (generation, seq), the newest generation, and the goals in the order they were set. */
export async function getPlan(db: Queryable, sessionId: string): Promise<{ current_generation: number | null; steps: PlanStepView[]; goals: GoalView[] }> {
  const steps = await db.query(
    'SELECT generation, seq, title, command, target, status, updated_at FROM plan_steps WHERE session_id = $1 ORDER BY generation, seq',
    [sessionId],
  );
  const goals = await db.query(
    'SELECT goal_id, goal, status, outcome, summary, set_at, closed_at FROM goals WHERE session_id = $1 ORDER BY event_position',
    [sessionId],
  );
  const stepViews = steps.rows.map((raw): PlanStepView => {
    const row = StepRow.parse(raw);
    return { ...row, updated_at: row.updated_at.toISOString() };
  });
  return {
    current_generation: stepViews.at(-1)?.generation ?? null,
    steps: stepViews,
    goals: goals.rows.map((raw): GoalView => {
      const row = GoalRow.parse(raw);
      return { ...row, set_at: row.set_at.toISOString(), closed_at: isoOrNull(row.closed_at) };
    }),
  };
}
