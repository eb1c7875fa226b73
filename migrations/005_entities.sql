-- Read model of the entities projection (src/projections/entities.ts): the fleet inventory, one row per
-- host, container or VM, rebuilt from the entity-<slug> streams at any time. Slugs sort bytewise (COLLATE "C").
CREATE TABLE IF NOT EXISTS entities (
  slug               text COLLATE "C" PRIMARY KEY,
  type               text        NOT NULL CHECK (type IN ('host', 'lxc', 'vm')),
  name               text COLLATE "C" NOT NULL,
  state              text        NOT NULL CHECK (state IN ('provisioning', 'active', 'destroyed')),
  -- Guests: the host they run on and their Proxmox id.
  parent             text COLLATE "C",
  pve_id             integer,
  -- Hosts: how to reach them.
  ssh_host           text,
  ssh_port           integer,
  ssh_user           text,
  host_key           text,
  host_key_pinned_by text        CHECK (host_key_pinned_by IN ('first_connection', 'operator')),
  attributes         jsonb       NOT NULL DEFAULT '{}',
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS entities_by_type ON entities (type, slug);
CREATE INDEX IF NOT EXISTS entities_by_state ON entities (state, slug);
CREATE INDEX IF NOT EXISTS entities_by_parent ON entities (parent, slug);
