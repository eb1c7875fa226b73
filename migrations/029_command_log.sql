-- The command log (issue 35, GET /executions): executions across sessions, newest requested first, in keyset
-- pages on (requested_at, id). The page order gets its index, and so do the filters that narrow the most on
-- a large log: target (host filters ask it once per guest), the deciding rule, who requested. Status has one
-- (007); approver, risk and since/until narrow the rows these walk. Indexes only: the read model's rows do not
-- change, so the executions projection is not rebuilt. src/projections/executions.ts (listCommandLog) reads them.
CREATE INDEX IF NOT EXISTS executions_log ON executions (requested_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS executions_log_by_target ON executions (target, requested_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS executions_log_by_rule ON executions (rule_id, requested_at DESC, id DESC) WHERE rule_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS executions_log_by_actor ON executions ((requested_by->>'id'), requested_at DESC, id DESC);
