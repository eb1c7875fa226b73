-- Executions and approvals read models: what ran where, under which verdict, how it ended; and every
-- approval with its session, what it would run, who asked and who decided.
CREATE TABLE IF NOT EXISTS executions (
  id            text COLLATE "C" PRIMARY KEY,
  session_id    text COLLATE "C" NOT NULL,
  target        text        NOT NULL,
  command       text        NOT NULL,
  risk_class    text        NOT NULL,
  rule          text        NOT NULL,
  reason        text        NOT NULL,
  verdict       jsonb       NOT NULL,
  known_long    boolean     NOT NULL,
  status        text        NOT NULL,
  approval_id   text,
  exit_code     integer,
  signal        text,
  error         text,
  stdout_tail   text,
  stderr_tail   text,
  refusal       text,
  requested_by  jsonb       NOT NULL,
  requested_at  timestamptz NOT NULL,
  started_at    timestamptz,
  finished_at   timestamptz,
  duration_ms   integer,
  event_position bigint     NOT NULL
);
CREATE INDEX IF NOT EXISTS executions_by_session ON executions (session_id, event_position);
CREATE INDEX IF NOT EXISTS executions_by_status ON executions (status);

CREATE TABLE IF NOT EXISTS approvals (
  id            text COLLATE "C" PRIMARY KEY,
  session_id    text COLLATE "C" NOT NULL,
  execution_id  text        NOT NULL,
  command       text        NOT NULL,
  target        text        NOT NULL,
  risk_class    text        NOT NULL,
  status        text        NOT NULL CHECK (status IN ('pending', 'granted', 'denied', 'expired', 'cancelled')),
  requested_by  jsonb       NOT NULL,
  requested_at  timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  decided_by    jsonb,
  decided_at    timestamptz,
  decision_reason text
);
CREATE INDEX IF NOT EXISTS approvals_by_status ON approvals (status, requested_at);
CREATE INDEX IF NOT EXISTS approvals_pending_due ON approvals (expires_at) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS approvals_by_session ON approvals (session_id);
