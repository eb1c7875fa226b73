// Deciders for a session's plan: proposing a new generation of steps and moving one step along.
import { RuleViolation } from '../messages.ts';
import type { SessionCommand } from './commands.ts';
import type { SessionEvent, StepStatus } from './events.ts';
import type { PlanStep, SessionState } from './state.ts';

type ProposePlan = Extract<SessionCommand, { type: 'propose_plan' }>;
type UpdatePlanStep = Extract<SessionCommand, { type: 'update_plan_step' }>;

export function decideProposePlan(command: ProposePlan, state: SessionState): SessionEvent[] {
  const generation = state.planGeneration + 1;
  // Pending steps of an older plan would otherwise wait forever for an update no one will send.
  const stillPending = state.steps.filter((step) => step.status === 'pending').map(({ generation, seq }) => ({ generation, seq }));
  const steps = command.steps.map((step, index) => ({ ...step, seq: index + 1 }));
  const proposed: SessionEvent = { type: 'PlanProposed', data: { generation, steps } };
  if (stillPending.length === 0) return [proposed];
  return [{ type: 'PlanStepsReplaced', data: { by_generation: generation, steps: stillPending } }, proposed];
}

/** What an agent may move a step to; a finished step never changes again. */
const NEXT_STATUSES: Record<StepStatus, readonly StepStatus[]> = {
  pending: ['running', 'skipped'],
  running: ['done', 'skipped', 'failed'],
  done: [],
  skipped: [],
  failed: [],
  replaced: [],
};

export function decideUpdatePlanStep(command: UpdatePlanStep, state: SessionState): SessionEvent[] {
  const generation = state.planGeneration;
  if (generation === 0) throw new RuleViolation('no_plan', 'There is no plan to update; propose a plan first.');
  const plan = state.steps.filter((step) => step.generation === generation);
  const step = plan.find((s) => s.seq === command.seq);
  if (step === undefined) {
    throw new RuleViolation(
      'unknown_step',
      `The current plan (generation ${generation}) has steps 1 to ${plan.length}, not ${command.seq}; update one of those or propose a new plan.`,
    );
  }
  const next = NEXT_STATUSES[step.status];
  if (!next.includes(command.status)) {
    throw new RuleViolation('invalid_step_transition', refusedTransition(step, next, command.status));
  }
  if (command.status === 'running') {
    const earlier = plan.find((s) => s.seq < step.seq && (s.status === 'pending' || s.status === 'running'));
    if (earlier !== undefined) {
      throw new RuleViolation(
        'step_order',
        `step ${step.seq} cannot start while step ${earlier.seq} is still ${earlier.status}; finish or skip step ${earlier.seq} first`,
      );
    }
  }
  return [{ type: 'PlanStepUpdated', data: { generation, seq: step.seq, from: step.status, status: command.status, closed_by_task: false } }];
}

function refusedTransition(step: PlanStep, next: readonly StepStatus[], wanted: StepStatus): string {
  const head = `step ${step.seq} is ${step.status}`;
  if (next.length === 0) return `${head}: it can no longer change, so it cannot become ${wanted}; propose a new plan to do it again`;
  return `${head}: it can become ${either(next)}, not ${wanted}`;
}

function either(options: readonly string[]): string {
  return options.length > 1 ? `${options.slice(0, -1).join(', ')} or ${options.slice(-1).join('')}` : options.join('');
}
