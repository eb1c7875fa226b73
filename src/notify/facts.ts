// The notices the notifier owes, read from a session's own events (not from the read models, which may lag the
// log the notifier follows): what an approval would run, where, why and under which rule, who asked, the
// session's goal at the time; what a failed turn said. Pure: the events are passed in.
import { z } from 'zod';
import { Actor } from '../domain/messages.ts';
import { parseSessionEvent } from '../domain/session/events.ts';
import type { Notice } from './message.ts';

/** What the fact builders read of a stored event. */
export interface FactEvent {
  readonly eventId: string;
  readonly type: string;
  readonly data: Record<string, unknown>;
  readonly metadata: Record<string, unknown>;
  readonly recordedAt: string;
}

const When = z.string().min(1);
/** The only events the notices are built from (the others are not parsed). */
const READ = new Set(['GoalSet', 'ExecutionRequested', 'ApprovalRequested', 'TurnFailed']);

function occurredAt(event: FactEvent): string {
  const at = When.safeParse(event.metadata.occurred_at);
  return at.success ? at.data : event.recordedAt;
}

function actorOf(event: FactEvent): z.infer<typeof Actor> | null {
  const actor = Actor.safeParse(event.metadata.actor);
  return actor.success ? actor.data : null;
}

/** The notice of an approval (requested, or about to expire), or null when the stream holds no such approval. */
export function approvalNotice(sessionId: string, events: readonly FactEvent[], approvalId: string, kind: 'approval_requested' | 'approval_expiring'): Notice | null {
  let goal: string | null = null;
  const verdicts = new Map<string, { reason: string; rule: string }>();
  for (const stored of events) {
    if (!READ.has(stored.type)) continue;
    const event = parseSessionEvent(stored.type, stored.data);
    if (event.type === 'GoalSet') goal = event.data.goal;
    else if (event.type === 'ExecutionRequested') verdicts.set(event.data.execution_id, { reason: event.data.verdict.reason, rule: event.data.verdict.rule });
    else if (event.type === 'ApprovalRequested' && event.data.approval_id === approvalId) {
      const d = event.data;
      const verdict = verdicts.get(d.execution_id) ?? null;
      return {
        kind,
        approval_id: d.approval_id,
        session_id: sessionId,
        execution_id: d.execution_id,
        command: d.command,
        target: d.target,
        risk_class: d.risk_class,
        reason: verdict?.reason ?? null,
        classifier_rule: verdict?.rule ?? null,
        rule_id: d.rule_id ?? null,
        policy_version: d.policy_version ?? null,
        expires_at: d.expires_at,
        requested_at: occurredAt(stored),
        requested_by: actorOf(stored),
        goal,
      };
    }
  }
  return null;
}

/** The notice of a failed turn: the TurnFailed event with the goal the session had then. */
export function turnFailedNotice(sessionId: string, events: readonly FactEvent[], failedEventId: string): Notice | null {
  let goal: string | null = null;
  for (const stored of events) {
    if (!READ.has(stored.type)) continue;
    const event = parseSessionEvent(stored.type, stored.data);
    if (event.type === 'GoalSet') goal = event.data.goal;
    else if (event.type === 'TurnFailed' && stored.eventId === failedEventId) {
      return { kind: 'turn_failed', session_id: sessionId, reason: event.data.reason, detail: event.data.detail, at: occurredAt(stored), goal };
    }
  }
  return null;
}
