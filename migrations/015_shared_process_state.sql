-- State that decides what the servers sharing this database do, so that none of it lives only in one process:
-- whose turn is running in a session, which server runs which execution (its heartbeat, and what it printed so
-- far), where the agent's reactor stands in the log, and the sessions it still has to wake.

-- One agent loop per session across all servers. A holder renews expires_at while its turn runs; a lease past
-- it belongs to a server that died, and the next turn takes it over. cancel_requested reaches the holder with
-- its next renewal, whichever server the cancel came to.
CREATE TABLE IF NOT EXISTS turn_leases (
  session_id       text COLLATE "C" PRIMARY KEY,
  turn_id          text        NOT NULL,
  holder           text        NOT NULL,
  expires_at       timestamptz NOT NULL,
  cancel_requested boolean     NOT NULL DEFAULT false
);

-- An execution a server claimed (before its start is recorded) and runs: beat_at is renewed while it runs; the
-- output so far and the hung probe's answer travel with it, so GET /executions/:id on any server shows them.
CREATE TABLE IF NOT EXISTS execution_claims (
  execution_id   text COLLATE "C" PRIMARY KEY,
  session_id     text COLLATE "C" NOT NULL,
  holder         text        NOT NULL,
  claimed_at     timestamptz NOT NULL DEFAULT now(),
  beat_at        timestamptz NOT NULL DEFAULT now(),
  state          text        NOT NULL DEFAULT 'starting' CHECK (state IN ('starting', 'running', 'hung')),
  stdout_so_far  text        NOT NULL DEFAULT '',
  stderr_so_far  text        NOT NULL DEFAULT '',
  idle_ms        integer     NOT NULL DEFAULT 0,
  running_ms     integer     NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS execution_claims_by_beat ON execution_claims (beat_at);

-- Process managers that follow the log keep their place here (projections keep theirs with their tables).
CREATE TABLE IF NOT EXISTS reactor_checkpoints (
  name text PRIMARY KEY,
  tx   bigint NOT NULL,
  pos  bigint NOT NULL
);

-- Sessions whose agent may have to carry on (an execution it waited on ended); kept until a turn took the news
-- or it turned out not to be needed, so a restart or a busy turn loses none.
CREATE TABLE IF NOT EXISTS agent_wakeups (
  session_id text COLLATE "C" PRIMARY KEY,
  noted_at   timestamptz NOT NULL DEFAULT now()
);
