-- What decided each execution and approval under the operator's policy (issue 34): the decision (allow, ask,
-- deny), the deciding rule (a rule's id, `classifier`, `floor`) and the policy's version; and what a candidate in
-- shadow would have decided. Null on rows requested before the policy was consulted. The executions projection's
-- version was bumped, so a rebuild fills them from the events.
ALTER TABLE executions ADD COLUMN IF NOT EXISTS decision text;
ALTER TABLE executions ADD COLUMN IF NOT EXISTS rule_id text;
ALTER TABLE executions ADD COLUMN IF NOT EXISTS policy_version integer;
ALTER TABLE executions ADD COLUMN IF NOT EXISTS shadow integer;
ALTER TABLE executions ADD COLUMN IF NOT EXISTS shadow_decision text;
ALTER TABLE executions ADD COLUMN IF NOT EXISTS shadow_rule_id text;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS rule_id text;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS policy_version integer;
-- GET /policy/shadow: a shadow's decisions, newest first.
CREATE INDEX IF NOT EXISTS executions_by_shadow ON executions (shadow, event_position DESC) WHERE shadow IS NOT NULL;
