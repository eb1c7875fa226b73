-- What the agent's model calls cost (issue 33 point 3). Each ModelCallRecorded event is a row of model_calls,
-- failed calls included with their error; sessions carry the sums. Tokens are the provider's figures (NULL where it
-- reported none), and a session whose log holds no recorded call (one written before this change) keeps NULLs.
-- The sessions projection's version was bumped: a rebuild fills the new columns from the events.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS model_calls integer;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS input_tokens bigint;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS output_tokens bigint;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS cached_input_tokens bigint;

CREATE TABLE IF NOT EXISTS model_calls (
  call_id text PRIMARY KEY,
  session_id text NOT NULL,
  turn_id text NOT NULL,
  attempt integer NOT NULL,
  -- The event's position in the log: a session's calls in the order they were made.
  position bigint NOT NULL,
  at timestamptz NOT NULL,
  model text NOT NULL,
  provider_host text NOT NULL,
  input_tokens bigint,
  output_tokens bigint,
  cached_input_tokens bigint,
  estimated_input_tokens bigint NOT NULL,
  duration_ms integer NOT NULL,
  first_token_ms integer,
  finish_reason text,
  context jsonb NOT NULL,
  error jsonb,
  session_deleted boolean NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS model_calls_by_session ON model_calls (session_id, position);
CREATE INDEX IF NOT EXISTS model_calls_by_time ON model_calls (at);
