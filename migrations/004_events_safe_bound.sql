-- Readers read events only below a bound no open appender can still write under. Using the snapshot's xmin
-- alone would let ANY transaction on the server with an xid (another database's, a projector's own write,
-- an idle-in-transaction client) stall every reader. Appenders take a lock on `events` before they get an xid
-- (see the SQL event store), so an open transaction that holds no lock on `events` can never add events below
-- the bound and is left out. A transaction that ended after the snapshot was taken still counts (it may have
-- been an appender): that only delays, never skips.
CREATE OR REPLACE FUNCTION events_safe_bound() RETURNS xid8 LANGUAGE sql STABLE AS $$
  WITH snap AS MATERIALIZED (SELECT pg_current_snapshot() AS s),
  not_appenders AS (
    SELECT t.transactionid::text AS xid32
    FROM pg_locks t
    WHERE t.locktype = 'transactionid' AND t.granted AND t.pid IS NOT NULL
      AND t.pid NOT IN (
        SELECT r.pid FROM pg_locks r
        WHERE r.locktype = 'relation' AND r.pid IS NOT NULL
          AND r.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND r.relation = 'events'::regclass
      )
  )
  SELECT COALESCE(min(x), (SELECT pg_snapshot_xmax(s) FROM snap))
  FROM snap, pg_snapshot_xip(snap.s) AS x
  WHERE (x::text::numeric % 4294967296)::text NOT IN (SELECT xid32 FROM not_appenders)
$$;
