// The plans read model: every generation of a session's plan with each step's status, and every goal the
// session had with its own outcome, so a multi-goal session keeps the result of each.
//
//   PlanProposed       inserts the generation's steps as pending; a step already there, or listed twice, keeps the first
//   PlanStepsReplaced  marks the listed steps replaced
//   PlanStepUpdated    sets the step's status
//   GoalSet            inserts the goal as open, unless it is already there
//   GoalSuperseded     closes the goal as superseded, if it is open
//   TaskCompleted      closes the task's goal as completed, with the outcome and summary, if it is open
//   (SessionDeleted is not handled: a deleted session's plan stays for operators and auditors)
//
// Steps and goals that do not exist are left alone by the updates; every change stamps the event's time.
//
// A batch loads the steps and goals its events name (one statement per table), folds the events into them in
// memory, and writes each changed row once.
import { z } from 'zod';
import type { Queryable, Transaction } from '../ports/db.ts';
import type { ProjectedEvent } from '../ports/event-store.ts';
import { Outcome, StepStatus } from '../domain/session/events.ts';
import { RowSet, type TableShape } from './batch.ts';
import type { Projection } from './projection.ts';
import { isoOrNull, occurredAt, type SessionEventEntry, sessionEventsIn } from './rows.ts';

/** 2: a deleted session's steps and goals are kept. */
const PLANS_VERSION = 2;

/** A plan_steps row: the view, keyed by its session. */
interface StepRecord extends PlanStepView, Record<string, unknown> {
  session_id: string;
}

/** A goals row: the view, keyed by its session, with the position that orders a session's goals. */
interface GoalRecord extends GoalView, Record<string, unknown> {
  session_id: string;
  event_position: number;
}

const STEPS: TableShape<StepRecord> = {
  table: 'plan_steps',
  key: ['session_id', 'generation', 'seq'],
  columns: ['session_id', 'generation', 'seq', 'title', 'command', 'target', 'status', 'updated_at'],
};

const GOALS: TableShape<GoalRecord> = {
  table: 'goals',
  key: ['session_id', 'goal_id'],
  columns: ['session_id', 'goal_id', 'goal', 'status', 'outcome', 'summary', 'set_at', 'closed_at', 'event_position'],
};

type Applied = SessionEventEntry;


type StepKey = Pick<StepRecord, 'session_id' | 'generation' | 'seq'>;
type GoalKey = Pick<GoalRecord, 'session_id' | 'goal_id'>;

/** The rows the events name. */
function named(applied: readonly Applied[]): { steps: StepKey[]; goals: GoalKey[] } {
  const steps: StepKey[] = [];
  const goals: GoalKey[] = [];
  for (const { sessionId: session_id, event: e } of applied) {
    switch (e.type) {
      case 'PlanProposed':
        for (const { seq } of e.data.steps) steps.push({ session_id, generation: e.data.generation, seq });
        break;
      case 'PlanStepsReplaced':
        for (const { generation, seq } of e.data.steps) steps.push({ session_id, generation, seq });
        break;
      case 'PlanStepUpdated':
        steps.push({ session_id, generation: e.data.generation, seq: e.data.seq });
        break;
      case 'GoalSet':
      case 'GoalSuperseded':
        goals.push({ session_id, goal_id: e.data.goal_id });
        break;
      case 'TaskCompleted':
        if (e.data.goal_id !== null) goals.push({ session_id, goal_id: e.data.goal_id });
        break;
      default:
        break;
    }
  }
  return { steps, goals };
}

/** The step's row is the batch's own (loaded or put by it), so it is changed where it is, not copied. */
function setStatus(steps: RowSet<StepRecord>, key: StepKey, status: StepStatus, at: string): void {
  const step = steps.get(key);
  if (!step) return;
  step.status = status;
  step.updated_at = at;
  steps.put(step);
}

function closeGoal(goals: RowSet<GoalRecord>, key: GoalKey, closing: Pick<GoalRecord, 'status'> & Partial<Pick<GoalRecord, 'outcome' | 'summary'>>, at: string): void {
  const goal = goals.get(key);
  if (goal?.status === 'open') goals.put({ ...goal, ...closing, closed_at: at });
}

function fold(steps: RowSet<StepRecord>, goals: RowSet<GoalRecord>, { sessionId: session_id, event: e, stored }: Applied): void {
  const at = occurredAt(stored);
  switch (e.type) {
    case 'PlanProposed':
      for (const s of e.data.steps) {
        const step = { session_id, generation: e.data.generation, seq: s.seq };
        if (steps.get(step)) continue;
        steps.put({ ...step, title: s.title, command: s.command ?? null, target: s.target ?? null, status: 'pending', updated_at: at });
      }
      return;
    case 'PlanStepsReplaced':
      for (const { generation, seq } of e.data.steps) setStatus(steps, { session_id, generation, seq }, 'replaced', at);
      return;
    case 'PlanStepUpdated':
      setStatus(steps, { session_id, generation: e.data.generation, seq: e.data.seq }, e.data.status, at);
      return;
    case 'GoalSet': {
      const goal = { session_id, goal_id: e.data.goal_id };
      if (goals.get(goal)) return;
      goals.put({ ...goal, goal: e.data.goal, status: 'open', outcome: null, summary: null, set_at: at, closed_at: null, event_position: stored.position });
      return;
    }
    case 'GoalSuperseded':
      closeGoal(goals, { session_id, goal_id: e.data.goal_id }, { status: 'superseded' }, at);
      return;
    case 'TaskCompleted':
      // A task completed without a goal (none was set) leaves no goal to close.
      if (e.data.goal_id === null) return;
      closeGoal(goals, { session_id, goal_id: e.data.goal_id }, { status: 'completed', outcome: e.data.outcome, summary: e.data.summary }, at);
      return;
    case 'SessionDeleted':
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
    case 'ModelCallRecorded':
    case 'TurnEnded':
    case 'ExecutionRequested':
    case 'ExecutionRefused':
    case 'ExecutionStarted':
    case 'ExecutionSucceeded':
    case 'ExecutionFailed':
    case 'ExecutionTimedOut':
    case 'AssentOpened':
    case 'AssentClosed':
    case 'SessionHandedOver':
      return; // not part of the plan
    default: {
      const unhandled: never = e;
      throw new Error(`plans projection: unhandled event ${JSON.stringify(unhandled)}`);
    }
  }
}

async function applyBatch(tx: Transaction, events: readonly ProjectedEvent[]): Promise<void> {
  const applied = sessionEventsIn(events);
  const steps = new RowSet(STEPS);
  const goals = new RowSet(GOALS);
  const keys = named(applied);
  await Promise.all([steps.load(tx, keys.steps), goals.load(tx, keys.goals)]);
  for (const event of applied) fold(steps, goals, event);
  steps.flush(tx);
  goals.flush(tx);
}

export const plansProjection: Projection = {
  name: 'plans',
  version: PLANS_VERSION,
  tables: ['plan_steps', 'goals'],
  handles: new Set(['PlanProposed', 'PlanStepsReplaced', 'PlanStepUpdated', 'GoalSet', 'GoalSuperseded', 'TaskCompleted']),
  applyBatch,
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
