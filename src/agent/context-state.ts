// Where the session stands, in a few lines the fitter (./context-fit.ts) keeps whole while it shortens the
// conversation: every goal it was given and the current plan, whatever messages set them.
import type { SessionEvent } from '../domain/session/events.ts';
import { evolve, initialSessionState } from '../domain/session/state.ts';

const PLAN_EVENTS = new Set<SessionEvent['type']>(['PlanProposed', 'PlanStepsReplaced', 'PlanStepUpdated']);

interface GoalNote {
  readonly goal: string;
  status: string | null;
}

/** The goals (oldest first, each with what became of it) and the current plan, step by step; null when the session has neither. */
export function sessionStateLines(events: readonly SessionEvent[]): string[] | null {
  const goals = new Map<string, GoalNote>();
  for (const event of events) {
    if (event.type === 'GoalSet') goals.set(event.data.goal_id, { goal: event.data.goal, status: null });
    const closed = event.type === 'GoalSuperseded' ? event.data.goal_id : event.type === 'TaskCompleted' ? event.data.goal_id : null;
    const note = closed === null ? undefined : goals.get(closed);
    if (note) note.status = event.type === 'TaskCompleted' ? `completed: ${event.data.outcome}` : 'superseded';
  }
  // The plan as the deciders see it, folded from the only events that change it.
  const state = events.filter((e) => PLAN_EVENTS.has(e.type)).reduce(evolve, initialSessionState);
  const plan = state.steps.filter((step) => step.generation === state.planGeneration);
  if (goals.size === 0 && plan.length === 0) return null;

  const lines: string[] = [];
  for (const { goal, status } of goals.values()) lines.push(`Goal${status === null ? '' : ` (${status})`}: ${goal}`);
  if (plan.length > 0) {
    lines.push(`Plan (generation ${state.planGeneration}):`);
    for (const step of plan) lines.push(`${step.seq}. [${step.status}] ${step.title}`);
  }
  return lines;
}
