-- Sessions have owners (issue 32 point 6), and a deleted session stays in the sessions read model, marked, for
-- operators and auditors (point 7): lists leave it out unless asked. The sessions projection's version was bumped,
-- so it rebuilds from the events and fills these columns. owner and deleted_by are written role:id.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS owner text;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS deleted_at timestamptz;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS deleted_by text;
