-- The verifiable log (docs/verifiable-log.md): every committed event a leaf of an RFC 9162 Merkle tree, in
-- global-position order, sealed behind the write path by one server at a time (src/log/sealer.ts).

-- Which event each leaf is: positions have gaps (an append rolled back keeps its numbers), leaf indices do not.
CREATE TABLE IF NOT EXISTS log_leaves (
  leaf_index bigint PRIMARY KEY,
  position   bigint NOT NULL UNIQUE
);

-- Every complete node of the tree: (level, index) is the root of the perfect subtree over leaves
-- [index * 2^level, (index + 1) * 2^level); level 0 holds the leaf hashes. A root or a proof of any size reads
-- O(log n) of them (src/log/merkle.ts).
CREATE TABLE IF NOT EXISTS log_nodes (
  level smallint NOT NULL,
  idx   bigint   NOT NULL,
  hash  bytea    NOT NULL,
  PRIMARY KEY (level, idx)
);

-- How far the log is sealed, and with which key: one row. A sealer whose key is not this one refuses to seal
-- (two keys would sign two histories); `size` guards each batch so that a sealer that lost its lease cannot fork.
CREATE TABLE IF NOT EXISTS log_seal (
  one           boolean PRIMARY KEY DEFAULT true CHECK (one),
  size          bigint NOT NULL,
  last_position bigint NOT NULL,
  origin        text   NOT NULL,
  public_key    text   NOT NULL,
  sealed_at     timestamptz NOT NULL DEFAULT now()
);

-- Each signed checkpoint, stored exactly as signed (a C2SP tlog-checkpoint in a signed note).
CREATE TABLE IF NOT EXISTS log_checkpoints (
  tree_size bigint PRIMARY KEY,
  root      bytea  NOT NULL,
  note      text   NOT NULL,
  signed_at timestamptz NOT NULL DEFAULT now()
);
