-- What today's classifier makes of each command ever requested, kept for the policy what-if (issue 34 point 3):
-- a command is judged once (its verdict and the parts the policy's rules match on), and every what-if after that
-- reads the judgement back by the command's sha256 instead of parsing the command again. A judgement holds for
-- one version of the classifier's rules: rows of another RULES_VERSION are not read, and are judged again.
-- Not a projection: nothing in the log is replayed into it, and it can be emptied at any time.
CREATE TABLE IF NOT EXISTS command_judgements (
  command_sha256 text COLLATE "C" NOT NULL,
  rules_version  integer     NOT NULL,
  verdict        jsonb       NOT NULL,
  parts          jsonb       NOT NULL,
  judged_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (command_sha256, rules_version)
);
