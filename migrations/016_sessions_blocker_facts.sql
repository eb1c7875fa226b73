-- Facts the blocker rules (src/domain/session/blocker.ts, version 2) read besides those of 003 and 006: of the
-- current task, the approvals requested (a phrase about approvals is set aside when there were none) and the
-- runs that did not succeed, by how: failed, lost, refused as unreachable or for a host key mismatch.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS task_approvals_requested integer NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS task_executions_failed integer NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS task_executions_lost integer NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS task_executions_unreachable integer NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS task_executions_host_key_refused integer NOT NULL DEFAULT 0;
