-- nomos_expect(ok, what): true, or the statement fails with SQLSTATE NX001 and `what` as its message. A projector
-- that works a batch out from the events its process just appended sends its writes with the transaction's first
-- statements, and checks there, with this, that the log and its checkpoints are what it assumed: when they are not,
-- nothing of the transaction commits (src/projections/projector.ts, applyGuessed).
CREATE OR REPLACE FUNCTION nomos_expect(ok boolean, what text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION USING ERRCODE = 'NX001', MESSAGE = what;
  END IF;
  RETURN true;
END
$$;
