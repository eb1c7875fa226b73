-- GET /sessions?entity_id=… walked sessions newest first and asked session_entities, for each, whether it named
-- the entity: a page of an entity in one session of twenty took some thousand probes. Each row now carries its
-- session's created_at (which never changes once the session has started), and an index in page order lets the
-- page walk the entity's sessions newest first and stop at a page. src/projections/sessions.ts writes it.
ALTER TABLE session_entities ADD COLUMN IF NOT EXISTS created_at timestamptz;
UPDATE session_entities e SET created_at = s.created_at FROM sessions s WHERE s.id = e.session_id AND e.created_at IS NULL;
-- A row whose session is gone (none should be: a deletion takes its rows with it) cannot be listed anyway.
DELETE FROM session_entities WHERE created_at IS NULL;
ALTER TABLE session_entities ALTER COLUMN created_at SET NOT NULL;
CREATE INDEX IF NOT EXISTS session_entities_walk ON session_entities (slug, created_at DESC, session_id DESC);
DROP INDEX IF EXISTS session_entities_by_slug;
