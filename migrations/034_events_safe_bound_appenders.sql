-- events_safe_bound (004, 013): an appender is a transaction that holds `events` in ROW EXCLUSIVE mode (what an
-- INSERT takes, before it draws a position), not any transaction with any lock on it. Before, autovacuum's
-- ANALYZE of events (SHARE UPDATE EXCLUSIVE, with an xid for pg_statistic) and a projector's batch (reads events,
-- writes read models) held the bound below events already committed until they ended: readers saw a shorter log
-- for that while (a test of a guessed page failed on it under load). The sealer's horizon reads appenders alike
-- (src/log/store.ts).
CREATE OR REPLACE FUNCTION events_safe_bound() RETURNS xid8 LANGUAGE plpgsql STABLE AS $$
DECLARE
  snap CONSTANT pg_snapshot := pg_current_snapshot();
  bound xid8;
BEGIN
  IF pg_snapshot_xmin(snap) = pg_snapshot_xmax(snap) THEN
    RETURN pg_snapshot_xmax(snap);
  END IF;
  WITH locks AS MATERIALIZED (
    SELECT locktype, transactionid, pid, database, relation, mode, granted FROM pg_locks
    WHERE pid IS NOT NULL AND locktype IN ('transactionid', 'relation')
  ),
  not_appenders AS (
    SELECT t.transactionid::text AS xid32 FROM locks t
    WHERE t.locktype = 'transactionid' AND t.granted
      AND t.pid NOT IN (
        SELECT r.pid FROM locks r
        WHERE r.locktype = 'relation' AND r.relation = 'events'::regclass AND r.mode = 'RowExclusiveLock'
          AND r.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      )
  )
  SELECT min(x) INTO bound FROM pg_snapshot_xip(snap) AS x
  WHERE (x::text::numeric % 4294967296)::text NOT IN (SELECT xid32 FROM not_appenders);
  RETURN COALESCE(bound, pg_snapshot_xmax(snap));
END $$;
