-- Each `nomos verify` run against the database, as the console's Log page and GET /log show the last one.
CREATE TABLE IF NOT EXISTS log_verifications (
  id          bigserial   PRIMARY KEY,
  ran_at      timestamptz NOT NULL DEFAULT now(),
  ok          boolean     NOT NULL,
  exit_code   smallint    NOT NULL,
  summary     text        NOT NULL,
  findings    jsonb       NOT NULL
);
