-- Sessions end (issue 35 point 5). An outcome the log contradicts is flagged: a task closed as success whose every
-- change was denied, refused or failed (src/domain/session/dispute.ts) gets outcome_disputed and, in dispute, the
-- evidence. task_changes holds the current task's changes as the projection tracks them (what the rule reads);
-- closed_by is who closed the task (role:id; system:executor when Nomos closed an abandoned one). The sessions
-- projection's version was bumped, so it rebuilds from the events and fills these columns.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS outcome_disputed boolean NOT NULL DEFAULT false;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS dispute jsonb;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS task_changes jsonb NOT NULL DEFAULT '[]';
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS closed_by text;
CREATE INDEX IF NOT EXISTS sessions_disputed ON sessions (created_at DESC, id DESC) WHERE outcome_disputed;
-- The sessions still open, for the sweep that closes the idle ones: on columns an event's update of the row leaves
-- alone, so those updates stay HOT (migrations/018); few sessions are open at a time.
CREATE INDEX IF NOT EXISTS sessions_open ON sessions (created_at) WHERE status = 'active' AND deleted_at IS NULL;

-- The Nomos session an MCP session opened itself (not one its client attached to with session_id): the one that is
-- closed when the MCP session ends or lapses (src/mcp/sessions.ts).
ALTER TABLE mcp_sessions ADD COLUMN IF NOT EXISTS opened_session_id text COLLATE "C";
CREATE INDEX IF NOT EXISTS mcp_sessions_last_seen ON mcp_sessions (last_seen_at);
