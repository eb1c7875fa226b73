-- The sessions read model counts executions: how many ran, how many failed, which targets they ran on, and
-- (for the blocker rules) how many of the current task's runs the retry cap refused or the hard limit ended.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS executions_count integer NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS failed_executions integer NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS targets text[] NOT NULL DEFAULT '{}';
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS task_executions_refused integer NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS task_executions_timed_out integer NOT NULL DEFAULT 0;
