-- Where each projection stands, written in the same transaction as the projection's rows.
CREATE TABLE IF NOT EXISTS projection_checkpoints (
  name        text        PRIMARY KEY,
  version     integer     NOT NULL,
  tx          bigint      NOT NULL DEFAULT 0,
  pos         bigint      NOT NULL DEFAULT 0,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
