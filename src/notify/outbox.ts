// The notifications outbox's statements (migrations/026_notifications.sql): rows owed to channels, inserted once
// per (event, kind, channel); claimed for a while by the deliverer that sends them, so that two never send one
// at once; each attempt recorded, then the row delivered, given up, or due again after a backoff.
import type { Queryable } from '../ports/db.ts';
import { type Channel, type NotificationKind } from './channels.ts';
import { Notice } from './message.ts';

/** A row claimed for sending. */
export interface DueRow {
  readonly eventKey: string;
  readonly kind: NotificationKind;
  readonly channel: string;
  readonly approvalId: string | null;
  readonly notice: Notice;
  /** Attempts made before this one. */
  readonly attempts: number;
}

/** What is owed to the channels that want a notice's kind; a row already there (a retry, another server) stays as it is. */
export async function enqueue(q: Queryable, eventKey: string, notice: Notice, channels: readonly Channel[]): Promise<void> {
  const names = channels.filter((c) => c.events.includes(notice.kind)).map((c) => c.name);
  if (names.length === 0) return;
  await q.query(
    `INSERT INTO notification_outbox (event_key, kind, channel, approval_id, session_id, notice, due_at)
     SELECT $1, $2, c, $3, $4, $5::jsonb, now() FROM unnest($6::text[]) AS c
     ON CONFLICT (event_key, kind, channel) DO NOTHING`,
    [eventKey, notice.kind, 'approval_id' in notice ? notice.approval_id : null, notice.session_id, JSON.stringify(notice), names],
  );
}

/**
 * Claims up to `limit` rows due now on the given channels for `holdMs` (rows another deliverer is sending are
 * skipped, not waited for); a claim that lapses (its server died mid-send) makes the row due again.
 */
export async function claimDue(q: Queryable, channels: readonly string[], limit: number, holdMs: number): Promise<DueRow[]> {
  const { rows } = await q.query<{ event_key: string; kind: NotificationKind; channel: string; approval_id: string | null; notice: unknown; attempts: number }>(
    `UPDATE notification_outbox o SET claimed_until = now() + $3 * interval '1 millisecond'
       FROM (SELECT event_key, kind, channel FROM notification_outbox
              WHERE status = 'pending' AND due_at <= now() AND (claimed_until IS NULL OR claimed_until < now()) AND channel = ANY($1::text[])
              ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED) d
      WHERE o.event_key = d.event_key AND o.kind = d.kind AND o.channel = d.channel
      RETURNING o.event_key, o.kind, o.channel, o.approval_id, o.notice, o.attempts`,
    [channels, limit, holdMs],
  );
  return rows.map((r) => ({ eventKey: r.event_key, kind: r.kind, channel: r.channel, approvalId: r.approval_id, notice: Notice.parse(typeof r.notice === 'string' ? JSON.parse(r.notice) : r.notice), attempts: r.attempts }));
}

export interface AttemptOutcome {
  readonly at: Date;
  readonly durationMs: number;
  readonly ok: boolean;
  readonly status: number | null;
  readonly error: string | null;
  /** For a failure: how long until it is tried again (from the database's clock, as claims are), or null to give up. */
  readonly retryAfterMs: number | null;
}

/** Records an attempt and what it makes of the row: delivered, due again at `retryAt`, or failed for good. */
export async function recordAttempt(q: Queryable, row: DueRow, outcome: AttemptOutcome): Promise<void> {
  const attempt = row.attempts + 1;
  await q.query(
    `INSERT INTO notification_attempts (event_key, kind, channel, attempt, at, duration_ms, ok, status_code, error)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
    [row.eventKey, row.kind, row.channel, attempt, outcome.at.toISOString(), Math.round(outcome.durationMs), outcome.ok, outcome.status, outcome.error],
  );
  const status = outcome.ok ? 'delivered' : outcome.retryAfterMs === null ? 'failed' : 'pending';
  await q.query(
    `UPDATE notification_outbox SET attempts = $4, status = $5, claimed_until = NULL,
            due_at = CASE WHEN $6::integer IS NULL THEN due_at ELSE now() + $6::integer * interval '1 millisecond' END, finished_at = CASE WHEN $5 = 'pending' THEN NULL ELSE $7::timestamptz END,
            note = CASE WHEN $5 = 'failed' THEN $8 ELSE NULL END
      WHERE event_key = $1 AND kind = $2 AND channel = $3`,
    [row.eventKey, row.kind, row.channel, attempt, status, outcome.retryAfterMs === null ? null : Math.round(outcome.retryAfterMs), outcome.at.toISOString(), `gave up after ${attempt} attempts`],
  );
}

/** A row not worth sending any more (its approval was decided meanwhile): set aside, with why. */
export async function skip(q: Queryable, row: DueRow, note: string): Promise<void> {
  await q.query(`UPDATE notification_outbox SET status = 'skipped', claimed_until = NULL, finished_at = now(), note = $4 WHERE event_key = $1 AND kind = $2 AND channel = $3`, [
    row.eventKey,
    row.kind,
    row.channel,
    note,
  ]);
}

/** How the notifications of an approval went, per kind and channel. */
export interface NotificationState {
  readonly channel: string;
  readonly kind: NotificationKind;
  readonly status: 'pending' | 'delivered' | 'failed' | 'skipped';
  readonly attempts: number;
  readonly last_error: string | null;
  readonly last_attempt_at: string | null;
  /** pending: when it is tried (again). */
  readonly next_attempt_at: string | null;
  readonly delivered_at: string | null;
  /** skipped or failed: why. */
  readonly note: string | null;
}

export async function notificationsOfApproval(q: Queryable, approvalId: string): Promise<NotificationState[]> {
  const { rows } = await q.query<{ channel: string; kind: NotificationKind; status: NotificationState['status']; attempts: number; due_at: Date | string; finished_at: Date | string | null; note: string | null; last_error: string | null; last_attempt_at: Date | string | null }>(
    `SELECT o.channel, o.kind, o.status, o.attempts, o.due_at, o.finished_at, o.note, a.error AS last_error, a.at AS last_attempt_at
       FROM notification_outbox o
       LEFT JOIN LATERAL (SELECT error, at FROM notification_attempts t
                           WHERE t.event_key = o.event_key AND t.kind = o.kind AND t.channel = o.channel ORDER BY attempt DESC LIMIT 1) a ON true
      WHERE o.approval_id = $1 ORDER BY o.created_at, o.kind, o.channel`,
    [approvalId],
  );
  const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());
  return rows.map((r) => ({
    channel: r.channel,
    kind: r.kind,
    status: r.status,
    attempts: r.attempts,
    last_error: r.last_error,
    last_attempt_at: iso(r.last_attempt_at),
    next_attempt_at: r.status === 'pending' ? iso(r.due_at) : null,
    delivered_at: r.status === 'delivered' ? iso(r.finished_at) : null,
    note: r.note,
  }));
}
