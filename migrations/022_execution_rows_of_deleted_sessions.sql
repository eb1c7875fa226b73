-- A deleted session's approvals and executions stay in their read models for operators and auditors (issue 32
-- point 7), marked here; lists, counts and the sweeps leave them out unless asked. The executions projection's
-- version was bumped, so a rebuild restores the rows that earlier versions dropped.
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS session_deleted boolean NOT NULL DEFAULT false;
ALTER TABLE executions ADD COLUMN IF NOT EXISTS session_deleted boolean NOT NULL DEFAULT false;
