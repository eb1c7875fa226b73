-- A projection being rebuilt into shadow tables (schema nomos_shadow_<name>) while its live tables keep
-- answering: the version being built, how far the shadow has got, and whether its secondary indexes exist.
-- The row and the shadow schema are created and removed together; a row left by a killed rebuild is resumed.
CREATE TABLE IF NOT EXISTS projection_rebuilds (
  name        text        PRIMARY KEY,
  version     integer     NOT NULL,
  tx          bigint      NOT NULL DEFAULT 0,
  pos         bigint      NOT NULL DEFAULT 0,
  events      bigint      NOT NULL DEFAULT 0,
  indexed     boolean     NOT NULL DEFAULT false,
  started_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
