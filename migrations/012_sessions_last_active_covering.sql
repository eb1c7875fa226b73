-- GET /sessions?since= counts the sessions active since then (after the page's cursor) before it picks how to
-- scan (src/projections/sessions.ts, manyActiveSince): with created_at and id in the index that count is an
-- index-only scan rather than a visit to every matching row.
DROP INDEX IF EXISTS sessions_by_last_active;
CREATE INDEX IF NOT EXISTS sessions_by_last_active ON sessions (last_active_at) INCLUDE (created_at, id);
