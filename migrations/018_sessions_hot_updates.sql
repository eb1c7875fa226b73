-- Every session event moves last_active_at, and an index on it made each of those updates write an entry in
-- every index of sessions and leave a dead row version behind (no HOT update). The index GET /sessions?since=
-- needs is now on the hour of last_active_at (UTC), a column that moves once an hour at most: an event's update
-- changes no indexed column and stays on its page. The list checks last_active_at itself on the rows that hour
-- admits (src/projections/sessions.ts, sinceBranches). Free room on each page lets those updates stay there.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS active_hour timestamp
  GENERATED ALWAYS AS (date_trunc('hour', last_active_at AT TIME ZONE 'UTC')) STORED;
DROP INDEX IF EXISTS sessions_by_last_active;
CREATE INDEX IF NOT EXISTS sessions_by_active_hour ON sessions (active_hour) INCLUDE (created_at, id);
ALTER TABLE sessions SET (fillfactor = 90);
