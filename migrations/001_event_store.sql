-- The append-only event log. global_position orders events for humans and APIs; subscribers read in
-- (transaction_id, global_position) order and only below the oldest open transaction, so an event whose
-- transaction commits after a later-numbered one is never skipped.
CREATE TABLE IF NOT EXISTS events (
  global_position  bigserial   PRIMARY KEY,
  transaction_id   xid8        NOT NULL DEFAULT pg_current_xact_id(),
  event_id         uuid        NOT NULL UNIQUE,
  stream_name      text        NOT NULL,
  stream_position  bigint      NOT NULL,
  type             text        NOT NULL,
  data             jsonb       NOT NULL,
  metadata         jsonb       NOT NULL,
  recorded_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stream_name, stream_position)
);

CREATE INDEX IF NOT EXISTS events_tx_order ON events (transaction_id, global_position);

-- One row per stream: the row lock serialises writers of one stream, the version checks their expectation.
CREATE TABLE IF NOT EXISTS streams (
  stream_name text   PRIMARY KEY,
  version     bigint NOT NULL
);

CREATE OR REPLACE FUNCTION events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events are append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END $$;

DROP TRIGGER IF EXISTS events_no_update_delete ON events;
CREATE TRIGGER events_no_update_delete BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION events_are_append_only();

DROP TRIGGER IF EXISTS events_no_truncate ON events;
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_are_append_only();
