-- A fleet that shows its health (issue 35). The entities projection (src/projections/entities.ts, version 3)
-- records, from the log, when each entity was retired and by whom, and each host's last contact and last
-- failure as executions saw them; it keeps which host each execution in flight runs through until it ends.
-- host_reachability is not a read model: the reachability check (src/fleet/reachability.ts) writes it, one
-- row per host, and a rebuild leaves it alone.
ALTER TABLE entities ADD COLUMN IF NOT EXISTS retired_at timestamptz;
ALTER TABLE entities ADD COLUMN IF NOT EXISTS retired_by text;
ALTER TABLE entities ADD COLUMN IF NOT EXISTS retired_reason text;
ALTER TABLE entities ADD COLUMN IF NOT EXISTS last_contact_at timestamptz;
ALTER TABLE entities ADD COLUMN IF NOT EXISTS last_failure_at timestamptz;
ALTER TABLE entities ADD COLUMN IF NOT EXISTS last_error text;

-- An execution requested on a host or one of its guests, until it ends: which host it runs through, and
-- whether its connection was attempted (ExecutionStarted comes before the SSH connection is opened).
CREATE TABLE IF NOT EXISTS entity_execution_hosts (
  execution_id text COLLATE "C" PRIMARY KEY,
  host         text COLLATE "C" NOT NULL,
  started      boolean     NOT NULL DEFAULT false
);

CREATE TABLE IF NOT EXISTS host_reachability (
  slug            text COLLATE "C" PRIMARY KEY,
  checked_at      timestamptz NOT NULL,
  reachable       boolean     NOT NULL,
  -- The last check's error; null when it reached the host.
  error           text,
  last_ok_at      timestamptz,
  last_failed_at  timestamptz,
  -- The error of the check at last_failed_at.
  last_failed_error text
);
