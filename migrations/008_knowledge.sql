-- Read model of the knowledge projection (src/projections/knowledge.ts): runbooks, investigations and
-- notes, one row per knowledge-<id> stream, rebuilt from the events at any time. The id is derived from the
-- kind and normalised title (src/commands/knowledge.ts), so one item per kind and title needs no index here.
CREATE TABLE IF NOT EXISTS knowledge (
  id         text COLLATE "C" PRIMARY KEY,
  kind       text        NOT NULL CHECK (kind IN ('runbook', 'investigation', 'note')),
  title      text        NOT NULL,
  body       text        NOT NULL,
  -- Entity slugs (and other TYPE:NAME things such as pool:ludo-lvm) the item is about.
  about      text[]      NOT NULL DEFAULT '{}',
  tags       text[]      NOT NULL DEFAULT '{}',
  -- The session that wrote it last; null when that was not a session (an operator).
  session_id text COLLATE "C",
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  -- Full-text search: title weighted A, tags B, body C (written by the projection with each change).
  search     tsvector    NOT NULL
);

CREATE INDEX IF NOT EXISTS knowledge_by_about ON knowledge USING gin (about);
CREATE INDEX IF NOT EXISTS knowledge_search ON knowledge USING gin (search);
