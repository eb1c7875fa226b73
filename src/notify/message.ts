// What a notification says, as a pure function of the facts the notifier took from the log: what will run, where,
// why, under which rule, until when, and where in the console to decide. It never carries a link that approves:
// deciding stays an authenticated act in the console, the CLI or the API.
import { z } from 'zod';
import type { NotificationKind } from './kinds.ts';

const Actor = z.object({ role: z.string(), id: z.string() });

/** The facts of an approval, from its ApprovalRequested and the ExecutionRequested it asks about. */
const ApprovalFacts = z.object({
  approval_id: z.string(),
  session_id: z.string(),
  execution_id: z.string(),
  command: z.string(),
  target: z.string(),
  risk_class: z.string(),
  /** The classifier's reason and rule (the verdict). */
  reason: z.string().nullable(),
  classifier_rule: z.string().nullable(),
  /** The policy's deciding rule and version; null before the policy was consulted. */
  rule_id: z.string().nullable(),
  policy_version: z.number().nullable(),
  expires_at: z.string(),
  requested_at: z.string(),
  requested_by: Actor.nullable(),
  goal: z.string().nullable(),
});

/** What an outbox row holds: one notice per event and kind, the same for every channel. */
export const Notice = z.discriminatedUnion('kind', [
  ApprovalFacts.extend({ kind: z.literal('approval_requested') }),
  ApprovalFacts.extend({ kind: z.literal('approval_expiring') }),
  z.object({ kind: z.literal('turn_failed'), session_id: z.string(), reason: z.string(), detail: z.string(), at: z.string(), goal: z.string().nullable() }),
  // started_at says how long it has run; rows owed before it was added have none.
  z.object({ kind: z.literal('execution_hung'), session_id: z.string(), execution_id: z.string(), target: z.string().nullable(), command: z.string().nullable(), at: z.string(), started_at: z.string().nullable().default(null) }),
]);
export type Notice = z.infer<typeof Notice>;

export interface Message {
  readonly kind: NotificationKind;
  /** One line (an email's subject, a push notification's title). */
  readonly title: string;
  /** Plain text, a few lines. */
  readonly text: string;
  /** The console's page for it (never one that decides). */
  readonly link: string;
  /** low: worth knowing; high: someone should act. */
  readonly urgency: 'default' | 'high' | 'urgent';
  /** The event's time: a webhook's `timestamp`. */
  readonly occurredAt: string;
  /** The facts, for machines (a webhook's `data`). */
  readonly data: Record<string, unknown>;
}

const LINE_MAX = 200;

/** A command or detail shortened for a title line. */
function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** "in 14 min", "in 40 s", "2 min ago": how far `at` is from `now`. */
export function relative(at: Date, now: Date): string {
  const ms = at.getTime() - now.getTime();
  const abs = Math.abs(ms);
  const amount = abs < 60_000 ? `${Math.round(abs / 1000)} s` : abs < 3_600_000 ? `${Math.round(abs / 60_000)} min` : `${(abs / 3_600_000).toFixed(1)} h`;
  return ms >= 0 ? `in ${amount}` : `${amount} ago`;
}

/** The console's address of a view (its hash routes, web/src/lib/router.svelte.ts), under the public base URL. */
export function consoleLink(publicUrl: string, ...path: string[]): string {
  const base = publicUrl.replace(/\/+$/, '');
  return `${base}/#/${path.map((p) => encodeURIComponent(p)).join('/')}`;
}

/** The message for a notice, as it reads at `now` (the expiry is said both as a time and as how long is left). */
export function renderMessage(notice: Notice, now: Date, publicUrl: string): Message {
  switch (notice.kind) {
    case 'approval_requested':
    case 'approval_expiring': {
      const expiring = notice.kind === 'approval_expiring';
      const link = `${consoleLink(publicUrl, 'approvals')}?approval=${encodeURIComponent(notice.approval_id)}`;
      const rule = notice.rule_id === null ? 'no policy rule (the classifier asked)' : `${notice.rule_id}${notice.policy_version === null ? '' : ` (policy version ${notice.policy_version})`}`;
      const lines = [
        `Command: ${notice.command}`,
        `Target: ${notice.target}`,
        `Why: ${notice.reason ?? 'no reason recorded'} (risk class ${notice.risk_class}${notice.classifier_rule === null ? '' : `, classifier rule ${notice.classifier_rule}`})`,
        `Rule: ${rule}`,
        ...(notice.goal === null ? [] : [`Session goal: ${clip(notice.goal, LINE_MAX)}`]),
        ...(notice.requested_by === null ? [] : [`Asked by: ${notice.requested_by.role}:${notice.requested_by.id}`]),
        `Expires: ${notice.expires_at} (${relative(new Date(notice.expires_at), now)})`,
        '',
        `Review it in the console (sign in to approve or deny; this message cannot approve): ${link}`,
      ];
      const title = `${expiring ? 'Approval expiring soon' : 'Approval needed'}: ${notice.risk_class} on ${notice.target}: ${clip(notice.command, 80)}`;
      return { kind: notice.kind, title, text: lines.join('\n'), link, urgency: expiring ? 'urgent' : 'high', occurredAt: notice.requested_at, data: { ...notice, link } };
    }
    case 'turn_failed': {
      const link = consoleLink(publicUrl, 'sessions', notice.session_id);
      const lines = [
        `The agent's turn failed: ${notice.reason}.`,
        `Detail: ${clip(notice.detail, 1_000)}`,
        ...(notice.goal === null ? [] : [`Session goal: ${clip(notice.goal, LINE_MAX)}`]),
        `At: ${notice.at} (${relative(new Date(notice.at), now)})`,
        '',
        `Session: ${link}`,
      ];
      return { kind: notice.kind, title: `Agent turn failed (${notice.reason}) in session ${notice.session_id.slice(0, 8)}`, text: lines.join('\n'), link, urgency: 'default', occurredAt: notice.at, data: { ...notice, link } };
    }
    case 'execution_hung': {
      const link = consoleLink(publicUrl, 'sessions', notice.session_id);
      const lines = [
        `A running command looks hung (silent, in uninterruptible sleep).`,
        `Command: ${notice.command ?? '(unknown)'}`,
        `Target: ${notice.target ?? '(unknown)'}`,
        `Execution: ${notice.execution_id}`,
        ...(notice.started_at === null ? [] : [`Running since: ${notice.started_at} (${relative(new Date(notice.started_at), now)})`]),
        `Seen: ${notice.at} (${relative(new Date(notice.at), now)})`,
        '',
        `Session: ${link}`,
      ];
      const title = `Command hung on ${notice.target ?? 'a target'}: ${clip(notice.command ?? notice.execution_id, 80)}`;
      return { kind: notice.kind, title, text: lines.join('\n'), link, urgency: 'high', occurredAt: notice.at, data: { ...notice, link } };
    }
    default: {
      const never: never = notice;
      return never;
    }
  }
}
