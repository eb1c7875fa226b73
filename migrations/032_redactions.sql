-- Redaction (issue 36 point 6, src/commands/redact.ts): the events stay append-only, but for one change: a
-- transaction that says it redacts (set_config('nomos.redacting', 'on', true)) may replace an event's data, and
-- nothing else of it. The PayloadRedacted event it appends first records who, when, why and the SHA-256 of the data
-- before, which the sealed leaf committed to: proofs hold, and `nomos verify` reports the redaction as such.
CREATE OR REPLACE FUNCTION events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND current_setting('nomos.redacting', true) = 'on'
     AND NEW.global_position = OLD.global_position AND NEW.transaction_id = OLD.transaction_id
     AND NEW.event_id = OLD.event_id AND NEW.stream_name = OLD.stream_name AND NEW.stream_position = OLD.stream_position
     AND NEW.type = OLD.type AND NEW.metadata = OLD.metadata AND NEW.recorded_at = OLD.recorded_at THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'events are append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END $$;

-- The redactions of an event, found by its position when its leaf is computed.
CREATE INDEX IF NOT EXISTS events_redactions ON events (((data->>'position')::bigint), global_position) WHERE type = 'PayloadRedacted';
