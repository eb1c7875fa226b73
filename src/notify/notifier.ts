// The notifier: a process manager run by one server at a time (a LedLoop, 'notify'). It follows the log from its
// place in reactor_checkpoints and puts what the operator's channels are owed into the outbox in the same
// transaction that moves its place, so a restart neither loses nor repeats one; each round it also owes a
// reminder for approvals near their expiry (approvals read model) and a word on executions seen hung
// (execution_claims); then it sends what is due, each row claimed so that no two servers send it at once,
// every attempt recorded, failures retried with exponential backoff.
import { createHash } from 'node:crypto';
import type { Db } from '../ports/db.ts';
import type { Checkpoint, EventStore, StoredEvent } from '../ports/event-store.ts';
import { sessionIdOf, sessionStream } from '../domain/session/stream.ts';
import { pause } from '../leases/led-loop.ts';
import { type Channel, type NotificationKind, redact, type Sender } from './channels.ts';
import { approvalNotice, turnFailedNotice } from './facts.ts';
import { type Notice, renderMessage } from './message.ts';
import { claimDue, type DueRow, enqueue, recordAttempt, skip } from './outbox.ts';

const PLACE = 'notify';
const PAGE = 200;
const CLAIM_BATCH = 20;

export interface NotifierSettings {
  readonly channels: readonly Channel[];
  /** The console's address in messages (NOMOS_PUBLIC_URL, or the server's own). */
  readonly publicUrl: string;
  /** How often due rows and the read models are looked at when the log is quiet. */
  readonly pollMs: number;
  /** The first retry's delay; each next one doubles, up to `retryMaxMs`. */
  readonly retryFirstMs: number;
  readonly retryMaxMs: number;
  /** Attempts before a row is given up as failed. */
  readonly maxAttempts: number;
  /** How long a deliverer holds a claimed row (longer than any send may take). */
  readonly claimMs: number;
}

export const DEFAULT_NOTIFIER_SETTINGS = { pollMs: 1_000, retryFirstMs: 5_000, retryMaxMs: 10 * 60_000, maxAttempts: 10, claimMs: 60_000 } as const;

/** The reminder before an approval lapses: 2 minutes before, or when 80 % of a shorter TTL has passed. */
export const EXPIRING_LEAD_MS = 2 * 60_000;
export const EXPIRING_LEAD_SHARE = 0.2;

/** The delay before attempt `attempt + 1`, after `attempt` failed ones. */
export function backoffMs(attempt: number, firstMs: number, maxMs: number): number {
  return Math.min(maxMs, firstMs * 2 ** Math.max(0, attempt - 1));
}

/** The id a receiver dedupes by: stable per event, kind and channel (the webhook-id, the mail's Message-ID). */
export function deliveryId(eventKey: string, kind: NotificationKind, channel: string): string {
  return `${eventKey}.${kind}.${createHash('sha256').update(channel).digest('hex').slice(0, 12)}`;
}

export class Notifier {
  private readonly byName: Map<string, Channel>;
  private readonly wanted: Set<NotificationKind>;

  constructor(
    private readonly store: EventStore,
    private readonly db: Db,
    private readonly senders: ReadonlyMap<string, Sender>,
    private readonly settings: NotifierSettings,
    private readonly log: (message: string, error?: unknown) => void,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.byName = new Map(settings.channels.map((c) => [c.name, c]));
    this.wanted = new Set(settings.channels.flatMap((c) => c.events));
  }

  /** Runs while `signal` lasts (the lead). */
  async run(signal: AbortSignal): Promise<void> {
    let changed = true;
    let wake: (() => void) | null = null;
    const subscription = this.store.changes().subscribe(() => {
      changed = true;
      wake?.();
    });
    try {
      let after = await this.place();
      while (!signal.aborted) {
        changed = false;
        const { next, more } = await this.collect(after);
        after = next;
        await this.owedByReadModels();
        await this.deliverDue(signal);
        if (more || changed) continue;
        await Promise.race([pause(this.settings.pollMs, signal), new Promise<void>((resolve) => (wake = resolve))]);
        wake = null;
      }
    } finally {
      subscription.unsubscribe();
    }
  }

  /** Where the notifier stands; a first start begins at the log's head (what happened before is not news). */
  async place(): Promise<Checkpoint> {
    const { rows } = await this.db.query<{ tx: string; pos: string }>('SELECT tx, pos FROM reactor_checkpoints WHERE name = $1', [PLACE]);
    const row = rows[0];
    if (row) return { tx: Number(row.tx), pos: Number(row.pos) };
    const { checkpoint } = await this.store.head();
    await this.db.query('INSERT INTO reactor_checkpoints (name, tx, pos) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [PLACE, checkpoint.tx, checkpoint.pos]);
    return this.place();
  }

  /** One page of the log: the notices it owes, enqueued with the notifier's new place in one transaction. */
  private async collect(after: Checkpoint): Promise<{ next: Checkpoint; more: boolean }> {
    const page = await this.store.readAll({ after, limit: PAGE });
    const last = page.events.at(-1);
    if (!last) return { next: after, more: page.pending };
    const owed: Array<{ key: string; notice: Notice }> = [];
    const streams = new Map<string, StoredEvent[]>();
    const streamOf = async (sessionId: string) => {
      let events = streams.get(sessionId);
      if (!events) streams.set(sessionId, (events = (await this.store.readStream(sessionStream(sessionId))).events));
      return events;
    };
    for (const event of page.events) {
      const sessionId = sessionIdOf(event.streamName);
      if (sessionId === null) continue;
      let notice: Notice | null = null;
      if (event.type === 'ApprovalRequested' && this.wanted.has('approval_requested')) {
        notice = approvalNotice(sessionId, await streamOf(sessionId), String(event.data.approval_id), 'approval_requested');
      } else if (event.type === 'TurnFailed' && this.wanted.has('turn_failed')) {
        notice = turnFailedNotice(sessionId, await streamOf(sessionId), event.eventId);
      }
      if (notice) owed.push({ key: event.eventId, notice });
    }
    await this.db.transaction(async (tx) => {
      for (const { key, notice } of owed) await enqueue(tx, key, notice, this.settings.channels);
      await tx.query('UPDATE reactor_checkpoints SET tx = $2, pos = $3 WHERE name = $1', [PLACE, last.checkpoint.tx, last.checkpoint.pos]);
    });
    return { next: last.checkpoint, more: page.pending || page.events.length === PAGE };
  }

  /** Reminders of approvals about to lapse, and executions seen hung: each owed once (the outbox's key). */
  private async owedByReadModels(): Promise<void> {
    if (this.wanted.has('approval_expiring')) {
      const { rows } = await this.db.query<{ id: string; session_id: string }>(
        `SELECT a.id, a.session_id FROM approvals a
          WHERE a.status = 'pending' AND a.expires_at > now()
            AND now() >= a.expires_at - LEAST($1 * interval '1 millisecond', (a.expires_at - a.requested_at) * $2::float8)
            AND NOT EXISTS (SELECT 1 FROM notification_outbox o WHERE o.event_key = a.id AND o.kind = 'approval_expiring')
          LIMIT 100`,
        [EXPIRING_LEAD_MS, EXPIRING_LEAD_SHARE],
      );
      for (const row of rows) {
        const notice = approvalNotice(row.session_id, (await this.store.readStream(sessionStream(row.session_id))).events, row.id, 'approval_expiring');
        if (notice) await enqueue(this.db, row.id, notice, this.settings.channels);
      }
    }
    if (this.wanted.has('execution_hung')) {
      const { rows } = await this.db.query<{ execution_id: string; session_id: string; target: string | null; command: string | null; started_at: Date | string }>(
        `SELECT c.execution_id, c.session_id, e.target, e.command, COALESCE(e.started_at, c.claimed_at) AS started_at FROM execution_claims c LEFT JOIN executions e ON e.id = c.execution_id
          WHERE c.state = 'hung' AND NOT EXISTS (SELECT 1 FROM notification_outbox o WHERE o.event_key = c.execution_id AND o.kind = 'execution_hung')
          LIMIT 100`,
      );
      const at = this.clock().toISOString();
      for (const r of rows) {
        await enqueue(this.db, r.execution_id, { kind: 'execution_hung', session_id: r.session_id, execution_id: r.execution_id, target: r.target, command: r.command, at, started_at: new Date(r.started_at).toISOString() }, this.settings.channels);
      }
    }
  }

  /** Sends what is due, a batch at a time, in parallel (one slow receiver does not hold the others back). */
  async deliverDue(signal?: AbortSignal): Promise<number> {
    let sent = 0;
    while (signal?.aborted !== true) {
      const rows = await claimDue(this.db, [...this.byName.keys()], CLAIM_BATCH, this.settings.claimMs);
      if (rows.length === 0) break;
      await Promise.all(rows.map((row) => this.deliver(row)));
      sent += rows.length;
      if (rows.length < CLAIM_BATCH) break;
    }
    return sent;
  }

  private async deliver(row: DueRow): Promise<void> {
    const channel = this.byName.get(row.channel);
    const sender = this.senders.get(row.channel);
    if (!channel || !sender) return;
    try {
      if (row.approvalId !== null) {
        const { rows } = await this.db.query<{ status: string }>('SELECT status FROM approvals WHERE id = $1', [row.approvalId]);
        const status = rows[0]?.status;
        if (status !== undefined && status !== 'pending') {
          await skip(this.db, row, `the approval was ${status} before it was sent`);
          return;
        }
      }
      const started = this.clock();
      const message = renderMessage(row.notice, started, this.settings.publicUrl);
      const t0 = performance.now();
      const result = await sender.send(message, { id: deliveryId(row.eventKey, row.kind, row.channel), at: started });
      const attempt = row.attempts + 1;
      const retryAfterMs = result.ok || attempt >= this.settings.maxAttempts ? null : backoffMs(attempt, this.settings.retryFirstMs, this.settings.retryMaxMs);
      const error = result.error === null ? null : redact(result.error, channel);
      await this.db.transaction(async (tx) => recordAttempt(tx, row, { at: started, durationMs: performance.now() - t0, ok: result.ok, status: result.status, error, retryAfterMs }));
      if (!result.ok) this.log(`notification to ${row.channel} failed (attempt ${attempt}${retryAfterMs === null ? ', giving up' : ''}): ${error ?? ''}`);
    } catch (error) {
      // The row's claim lapses and it is tried again.
      this.log(`notifying ${row.channel}`, error);
    }
  }
}
