-- Read model of the entities projection's relationships (src/projections/entities.ts): `from_slug type
-- to_slug`, as recorded on the from entity's stream (RelationshipCreated). The host → guest relation is
-- not stored here: it is each guest's parent in entities.
CREATE TABLE IF NOT EXISTS entity_relations (
  from_slug  text COLLATE "C" NOT NULL,
  to_slug    text COLLATE "C" NOT NULL,
  type       text COLLATE "C" NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (from_slug, to_slug, type)
);

CREATE INDEX IF NOT EXISTS entity_relations_by_to ON entity_relations (to_slug, type, from_slug);
