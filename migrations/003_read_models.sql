-- Read models of the sessions, transcript and plans projections (src/projections/*.ts): rebuilt from the
-- events at any time, so they hold no fact of their own. Ids, slugs and tool names sort bytewise
-- (COLLATE "C") so keyset pages and listings come out alike on every server, whatever its locale.

-- sessions: one row per session, with the aggregates the list filters and audits read.
CREATE TABLE IF NOT EXISTS sessions (
  id                      text COLLATE "C" PRIMARY KEY,
  title                   text,
  goal                    text,
  status                  text        NOT NULL CHECK (status IN ('active', 'done', 'failed')),
  outcome                 text        CHECK (outcome IN ('success', 'partial', 'failed')),
  summary                 text,
  blocker                 text,
  blocker_evidence        jsonb,
  pending_approval_ids    text[]      NOT NULL DEFAULT '{}',
  pending_approvals       integer     GENERATED ALWAYS AS (cardinality(pending_approval_ids)) STORED,
  approvals_requested     integer     NOT NULL DEFAULT 0,
  approvals_expired       integer     NOT NULL DEFAULT 0,
  user_message_count      integer     NOT NULL DEFAULT 0,
  assistant_message_count integer     NOT NULL DEFAULT 0,
  message_count           integer     GENERATED ALWAYS AS (user_message_count + assistant_message_count) STORED,
  -- A turn has exactly one assistant message once the agent recorded text or a tool call in it.
  turn_count              integer     GENERATED ALWAYS AS (assistant_message_count) STORED,
  tool_call_count         integer     NOT NULL DEFAULT 0,
  top_tools               jsonb       NOT NULL DEFAULT '[]',
  entities                text[]      NOT NULL DEFAULT '{}',
  created_at              timestamptz NOT NULL,
  last_active_at          timestamptz NOT NULL,
  closed_at               timestamptz,
  -- Facts the blocker rules read. task_* count since the session (re)opened, so a reopened session's
  -- blocker speaks of its last task only.
  turn_message_id         text,
  last_assistant_text     text,
  last_turn_failure       text,
  task_approvals_expired  integer     NOT NULL DEFAULT 0,
  task_approvals_denied   integer     NOT NULL DEFAULT 0,
  task_approvals_orphaned integer     NOT NULL DEFAULT 0
);

-- Every list filter pages in (created_at DESC, id DESC) order on an index of its own.
CREATE INDEX IF NOT EXISTS sessions_keyset ON sessions (created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS sessions_by_status ON sessions (status, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS sessions_by_outcome ON sessions (outcome, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS sessions_by_blocker ON sessions (blocker, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS sessions_by_last_active ON sessions (last_active_at);
CREATE INDEX IF NOT EXISTS sessions_unfinished_by_closed ON sessions (closed_at DESC, id DESC) WHERE outcome IN ('partial', 'failed');

CREATE TABLE IF NOT EXISTS session_tool_counts (
  session_id text COLLATE "C" NOT NULL,
  name       text COLLATE "C" NOT NULL,
  count      integer NOT NULL,
  PRIMARY KEY (session_id, name)
);

CREATE TABLE IF NOT EXISTS session_entities (
  session_id text COLLATE "C" NOT NULL,
  slug       text COLLATE "C" NOT NULL,
  PRIMARY KEY (session_id, slug)
);
CREATE INDEX IF NOT EXISTS session_entities_by_slug ON session_entities (slug, session_id);

-- transcript: messages in the order their creating events were stored, and the tool calls of each turn.
CREATE TABLE IF NOT EXISTS messages (
  session_id     text COLLATE "C" NOT NULL,
  id             text COLLATE "C" NOT NULL,
  role           text        NOT NULL CHECK (role IN ('user', 'assistant')),
  -- Null for an assistant message that so far holds only tool calls.
  text           text,
  created_at     timestamptz NOT NULL,
  event_position bigint      NOT NULL,
  PRIMARY KEY (session_id, id)
);
CREATE INDEX IF NOT EXISTS messages_in_order ON messages (session_id, event_position);

CREATE TABLE IF NOT EXISTS tool_calls (
  session_id            text COLLATE "C" NOT NULL,
  id                    text COLLATE "C" NOT NULL,
  seq                   integer     NOT NULL,
  message_id            text COLLATE "C" NOT NULL,
  name                  text        NOT NULL,
  args                  jsonb       NOT NULL,
  result                jsonb,
  error                 text,
  status                text        NOT NULL CHECK (status IN ('requested', 'completed', 'failed')),
  requested_at          timestamptz NOT NULL,
  completed_at          timestamptz,
  result_original_bytes integer,
  PRIMARY KEY (session_id, id),
  UNIQUE (session_id, seq)
);
CREATE INDEX IF NOT EXISTS tool_calls_by_message ON tool_calls (session_id, message_id, seq);

-- plans: every generation's steps, and every goal a session had with its own outcome.
CREATE TABLE IF NOT EXISTS plan_steps (
  session_id text COLLATE "C" NOT NULL,
  generation integer     NOT NULL,
  seq        integer     NOT NULL,
  title      text        NOT NULL,
  command    text,
  target     text,
  status     text        NOT NULL CHECK (status IN ('pending', 'running', 'done', 'skipped', 'failed', 'replaced')),
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (session_id, generation, seq)
);

CREATE TABLE IF NOT EXISTS goals (
  session_id     text COLLATE "C" NOT NULL,
  goal_id        text COLLATE "C" NOT NULL,
  goal           text        NOT NULL,
  status         text        NOT NULL CHECK (status IN ('open', 'superseded', 'completed')),
  outcome        text        CHECK (outcome IN ('success', 'partial', 'failed')),
  summary        text,
  set_at         timestamptz NOT NULL,
  closed_at      timestamptz,
  event_position bigint      NOT NULL,
  PRIMARY KEY (session_id, goal_id)
);
CREATE INDEX IF NOT EXISTS goals_in_order ON goals (session_id, event_position);
