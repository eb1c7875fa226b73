-- Where in the log each approval was asked (issue 36 point 7): the ApprovalRequested event's global position, so
-- that the console's approval card links to the session as the operator saw it then (GET /sessions/:id?at_position).
-- The executions projection's version was bumped, so a rebuild fills it from the events.
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS requested_position bigint;
