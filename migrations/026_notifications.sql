-- The notifications outbox (issue 35 point 1, docs/notify.md): what the notifier owes each of the operator's
-- channels, one row per (event, kind, channel), inserted once from the log (ON CONFLICT DO NOTHING) and delivered
-- at least once with backoff; and every attempt to deliver one. Not a projection: rows are facts about sending,
-- not about the log, and live through restarts and rebuilds. The notifier's place in the log is in
-- reactor_checkpoints (name 'notify').
CREATE TABLE IF NOT EXISTS notification_outbox (
  -- The event's id (ApprovalRequested, TurnFailed), or for a hung execution its execution id.
  event_key     text COLLATE "C" NOT NULL,
  kind          text NOT NULL CHECK (kind IN ('approval_requested', 'approval_expiring', 'turn_failed', 'execution_hung')),
  -- The channel's safe name (no secret in it).
  channel       text COLLATE "C" NOT NULL,
  approval_id   text COLLATE "C",
  session_id    text COLLATE "C",
  -- What the message is built from (src/notify/message.ts, Notice).
  notice        jsonb       NOT NULL,
  status        text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'skipped')),
  due_at        timestamptz NOT NULL,
  attempts      integer     NOT NULL DEFAULT 0,
  -- A deliverer holds the row until then: another one never sends it meanwhile.
  claimed_until timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz,
  -- Why it was given up or skipped.
  note          text,
  PRIMARY KEY (event_key, kind, channel)
);
CREATE INDEX IF NOT EXISTS notification_outbox_due ON notification_outbox (due_at) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS notification_outbox_by_approval ON notification_outbox (approval_id) WHERE approval_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS notification_attempts (
  event_key   text COLLATE "C" NOT NULL,
  kind        text        NOT NULL,
  channel     text COLLATE "C" NOT NULL,
  attempt     integer     NOT NULL,
  at          timestamptz NOT NULL,
  duration_ms integer     NOT NULL,
  ok          boolean     NOT NULL,
  -- The receiver's HTTP status (or SMTP reply code); null when none came (refused, timed out).
  status_code integer,
  error       text,
  PRIMARY KEY (event_key, kind, channel, attempt)
);
