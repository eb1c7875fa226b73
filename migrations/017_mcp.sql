-- Who made each tool call, and through which external agent: the event's actor and, for an MCP client, the
-- name and version it gave in its handshake (transcript projection, version 2).
ALTER TABLE tool_calls ADD COLUMN IF NOT EXISTS actor jsonb;
ALTER TABLE tool_calls ADD COLUMN IF NOT EXISTS client jsonb;

-- MCP sessions (the Mcp-Session-Id a client was given at its handshake), shared by every server: any server
-- answers any request of the session, stamps its tool calls with the client's name and version, and finds the
-- Nomos session its calls go to. started: that Nomos session's stream exists (it is started at the first call
-- that needs it, by whichever server wins the binding). last_position: the log position of the client's last
-- recorded call, which its next call waits for the read models to reach (it reads its own writes).
CREATE TABLE IF NOT EXISTS mcp_sessions (
  id               text COLLATE "C" PRIMARY KEY,
  actor_role       text        NOT NULL,
  actor_id         text        NOT NULL,
  client_name      text        NOT NULL,
  client_version   text        NOT NULL,
  protocol_version text        NOT NULL,
  nomos_session_id text COLLATE "C",
  started          boolean     NOT NULL DEFAULT false,
  last_position    bigint      NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL DEFAULT now(),
  last_seen_at     timestamptz NOT NULL DEFAULT now()
);
