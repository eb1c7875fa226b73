#!/usr/bin/env bash
# The README's API examples, top to bottom, each answer checked against what the README says of it. Run it
# against a fresh server (`NOMOS_SSH_KEY=~/.ssh/id_ed25519 npm start` on an empty data directory), with a host
# the key logs in to: FLEET_HOST, FLEET_PORT, FLEET_USER. Without a Proxmox host, `eval "$(examples/sandbox/start.sh)"`
# sets all four for a local sshd with pct and qm stand-ins (test/readme/tour-sandbox.test.ts runs it so;
# test/readme/tour.test.ts passes a local sshd of its own). Some steps are refused on purpose (an agent approving,
# a second approval, an unknown target, a host nothing answers on): each check says so as it holds.
#
# Between a `# README:` line and the next, the lines are the README's block word for word, except those starting
# with `check`, which are this script's own (test/readme/tour.test.ts holds the two equal).
set -euo pipefail

fail() {
  echo "tour: $*" >&2
  exit 1
}
trap 'echo "tour: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
for tool in curl jq; do command -v $tool >/dev/null || fail "it needs $tool (apt-get install $tool)"; done

# An HTTP error fails the tour, with the problem the server answered; after check_error_next, the requests up to
# the next check may answer one, and that check reads it.
# (curl before 7.76 has no --fail-with-body: there the problem itself is not shown.)
error_ok=''
fail_flag=--fail-with-body
command curl --help all 2>/dev/null | grep -q -- --fail-with-body || fail_flag=--fail
curl() {
  if [ -n "$error_ok" ]; then command curl "$@"; else command curl --show-error "$fail_flag" "$@"; fi
}
check_error_next() { error_ok=1; }

# check WHAT JSON FILTER: the jq FILTER holds of JSON, or the tour stops, saying WHAT was wrong.
checks=0
check() {
  error_ok=''
  jq -e "$3" >/dev/null 2>&1 <<<"$2" || fail "$1: expected $3 of: $(head -c 3000 <<<"$2")"
  checks=$((checks + 1))
  echo "tour: ok: $1"
}

# README: a session
N=${NOMOS_URL:-http://127.0.0.1:8092}
id=$(curl -s -X POST $N/sessions -H 'X-Nomos-Client: curl' -H 'X-Nomos-Actor: agent:rclone-bot' | jq -r .session_id)   # the session is the agent's: it writes only to its own

cmd() { curl -s -w '\n' -X POST "$N/sessions/$id/commands" -H 'content-type: application/json' -H 'X-Nomos-Actor: agent:rclone-bot' -d "$1"; }
cmd '{"type":"post_user_message","text":"the rclone backup is broken"}'
cmd '{"type":"set_goal","goal":"Fix the rclone backup so it completes instead of OOM-killing"}' | jq .recent_unfinished_sessions
cmd '{"type":"propose_plan","steps":[{"title":"inspect the timer"},{"title":"raise the memory limit"}]}'
cmd '{"type":"update_plan_step","seq":1,"status":"running"}'
cmd '{"type":"record_tool_call_requested","tool_call_id":"t1","name":"run","args":{"target":"lxc:rclone","command":"systemctl status rclone-backup.timer"}}'
cmd '{"type":"record_tool_call_completed","tool_call_id":"t1","result":{"exit_code":0,"stdout":"active (waiting)"}}'
pos=$(cmd '{"type":"record_assistant_message","text":"The timer is fine; the container runs out of memory."}' | jq .position)
check 'a new session' "\"$id\"" 'test("^[0-9a-f-]{36}$")'
check 'the last command' "$pos" 'type == "number" and . > 0'

# README: reading a session
curl -s "$N/sessions/$id" | jq '.session | {title, status, turn_count, tool_call_count, entities}'
check 'the session' "$(curl -s $N/sessions/$id)" '.session | .title == "Fix the rclone backup so it completes instead of OOM-killing" and .status == "active" and .turn_count == 1 and .tool_call_count == 1 and .entities == ["lxc:rclone"]'
curl -s $N/sessions/$id | jq -r '.messages[] | "\(.role): \(.content.text // "") \(.content.tool_calls | length) tool calls"'
check 'the transcript' "$(curl -s $N/sessions/$id)" '[.messages[].role] == ["user", "assistant"] and ([.messages[].content.tool_calls | length] | add) == 1'
curl -s $N/sessions/$id/tool_calls | jq -r '.[] | "\(.seq) \(.name) \(.status) \(.duration_ms)ms"'
check 'the tool calls' "$(curl -s $N/sessions/$id/tool_calls)" 'length == 1 and .[0].name == "run" and .[0].status == "completed"'
curl -s $N/sessions/$id/plan | jq -c '.steps[] | {seq, title, status}'
check 'the plan' "$(curl -s $N/sessions/$id/plan)" '[.steps[].status] == ["running", "pending"]'
curl -s $N/sessions/$id/events | jq -c '.events[] | {position, type, actor: .metadata.actor}'
check 'the events' "$(curl -s $N/sessions/$id/events)" '.events[0].metadata.actor == {role: "agent", id: "rclone-bot"} and .events[0].data.owner == {role: "agent", id: "rclone-bot"} and .events[-1].metadata.actor == {role: "agent", id: "rclone-bot"} and (.events | length) == 8'

# README: the fleet
jq -n --arg host "${FLEET_HOST:-192.168.8.10}" --argjson port "${FLEET_PORT:-22}" --arg user "${FLEET_USER:-root}" '{entities: [
  {slug: "host:strong", type: "host", ssh: {$host, $port, $user}},
  {slug: "lxc:rclone", type: "lxc", parent: "host:strong", pve_id: 132},
  {slug: "host:old-nas", type: "host", ssh: {host: "127.0.0.1", port: 9, user: "root"}}]}' |
  curl -s -X POST $N/entities -H 'content-type: application/json' -d @- | jq -c '.entities[]'
curl -s "$N/entities?type=lxc" | jq -r '.entities[] | "\(.slug) \(.state) on \(.parent)"'
check 'the inventory' "$(curl -s $N/entities)" '[.entities[].slug] | contains(["host:old-nas", "host:strong", "lxc:rclone"])'

# README: running commands
r=$(cmd '{"type":"run","target":"lxc:rclone","command":"grep MemTotal /proc/meminfo"}')   # reversible_low: runs at once
echo "$r" | jq '{status, risk: .verdict.risk_class, stdout}'
check 'a read-only command' "$r" '.status == "succeeded" and .verdict.risk_class == "reversible_low" and (.stdout | startswith("MemTotal:"))'
curl -s -X POST $N/classify -d '{"command":"pct exec 132 -- chown :10000 /mnt/media"}' -H 'content-type: application/json' | jq
check 'the verdict' "$(curl -s -X POST $N/classify -d '{"command":"pct exec 132 -- chown :10000 /mnt/media"}' -H 'content-type: application/json')" '.risk_class == "config_mutation" and .inner_commands == ["chown :10000 /mnt/media"]'
r=$(cmd '{"type":"run","target":"host:strong","command":"touch /tmp/nomos-tour"}')   # config_mutation: waits for an operator
echo "$r" | jq '{status, approval_id, expires_at}'
check 'a change' "$r" '.status == "approval_required" and (.approval_id | type) == "string" and has("stdout") == false'
a=$(echo "$r" | jq -r .approval_id)
curl -s "$N/approvals?status=pending" | jq '.approvals[] | {id, session_goal, command, target, risk_class}'
check 'the approvals inbox' "$(curl -s "$N/approvals?status=pending")" "any(.approvals[]; .id == \"$a\" and .command == \"touch /tmp/nomos-tour\")"
check_error_next
curl -s -X POST -H 'X-Nomos-Client: curl' $N/approvals/$a/approve -H 'X-Nomos-Actor: agent:rclone-bot' | jq '{status, detail}'   # 403: an agent never approves
check 'an agent approving is refused, 403, as intended' "$(curl -s -X POST -H 'X-Nomos-Client: curl' $N/approvals/$a/approve -H 'X-Nomos-Actor: agent:rclone-bot')" '.status == 403'
curl -s -X POST -H 'X-Nomos-Client: curl' $N/approvals/$a/approve | jq .execution   # the operator approves: it runs, exactly once
check 'the approved command' "$(curl -s "$N/executions/$(echo "$r" | jq -r .execution_id)")" '.status == "succeeded" and .exit_code == 0'
check_error_next
curl -s -X POST -H 'X-Nomos-Client: curl' $N/approvals/$a/approve | jq '{status, code}'   # 409: a second approval runs nothing
check 'a second approval is refused, 409, as intended: it ran once' "$(curl -s -X POST -H 'X-Nomos-Client: curl' $N/approvals/$a/approve)" '.status == 409'
r=$(cmd '{"type":"run","target":"host:strong","command":"rm /tmp/nomos-tour"}')   # destructive: always waits
curl -s -X POST $N/approvals/$(echo "$r" | jq -r .approval_id)/deny -d '{"reason":"not during backups"}' -H 'content-type: application/json' | jq -c
check 'the denied command is recorded denied, as intended' "$(curl -s "$N/executions/$(echo "$r" | jq -r .execution_id)")" '.status == "denied"'
curl -s -X POST $N/sessions/$id/assent -d '{"minutes":30}' -H 'content-type: application/json' | jq -c   # an operator's assent window
r=$(cmd '{"type":"run","target":"host:strong","command":"chmod 600 /tmp/nomos-tour"}')   # config_mutation inside it: runs at once
curl -s $N/executions/$(echo "$r" | jq -r .execution_id) | jq '{status, exit_code, stdout_tail}'
check 'a change inside the assent window' "$r" '.status == "succeeded" and .verdict.risk_class == "config_mutation"'
cmd '{"type":"inspect_path","path":"/tmp/nomos-tour","targets":["host:strong","lxc:rclone"]}' | jq -r '.rows[] | "\(.target) \(.status)\n\(.output)"'
curl -s $N/sessions/$id/executions | jq -c '.executions[] | {target, command, status, exit_code}'
check 'the executions' "$(curl -s "$N/sessions/$id/executions")" '[.executions[].status] | sort == ["denied", "succeeded", "succeeded", "succeeded", "succeeded", "succeeded"]'
check 'inspect_path' "$(curl -s "$N/sessions/$id/executions")" '[.executions[] | select(.command | startswith("mount")) | .stdout_tail | test("-rw-------")] == [true, true]'

# README: what is refused
check_error_next
r=$(cmd '{"type":"run","target":"host:nowhere","command":"rm -rf /srv/old"}')   # not in the inventory: 404, nothing recorded
echo "$r" | jq '{status, code, detail}'
check 'an unknown target is refused, 404, as intended' "$r" '.status == 404 and .code == "unknown_entity"'
r=$(cmd '{"type":"run","target":"host:old-nas","command":"uptime"}')   # nothing answers at its address: refused
echo "$r" | jq '{status, reason, detail}'
check 'a host nothing answers on (port 9) is refused as unreachable, as intended' "$r" '.status == "refused" and .reason == "unreachable"'
curl -s "$N/approvals?session_id=$id" | jq -c '.approvals[] | {command, status, decided_by}'
check 'the approvals' "$(curl -s "$N/approvals?session_id=$id")" '[.approvals[] | [.command, .status]] | sort == [["rm /tmp/nomos-tour", "denied"], ["touch /tmp/nomos-tour", "granted"]]'

# README: the review
pos=$(cmd '{"type":"complete_task","outcome":"partial","summary":"diagnosed OOM; the memory change was denied during backups"}' | jq .position)
curl -s "$N/sessions?outcome=partial&since=24h&limit=50" | jq '.sessions[] | {id: .id[:8], title, blocker, tool_call_count, turn_count, closed_at, duration_seconds}'
check 'the partial session' "$(curl -s "$N/sessions?outcome=partial&since=24h")" "any(.sessions[]; .id == \"$id\" and .blocker == \"approval_denied\" and .closed_at != null)"
curl -s "$N/sessions?entity_id=lxc:rclone&outcome=partial" | jq -r '.sessions[] | "\(.id[:8]) \(.blocker) \(.summary)"'
curl -s "$N/sessions?since=7d&limit=1000&fields=outcome,blocker,tool_call_count" | jq -c '.sessions[]'
check 'only some fields' "$(curl -s "$N/sessions?fields=outcome,blocker")" '.sessions[0] | keys == ["blocker", "id", "outcome"]'
id2=$(curl -s -X POST -H 'X-Nomos-Client: curl' $N/sessions | jq -r .session_id)   # a new session on the same trouble hears of the unfinished one
r=$(curl -s -X POST $N/sessions/$id2/commands -H 'content-type: application/json' -d '{"type":"set_goal","goal":"Raise the rclone container memory after the backups"}')
echo "$r" | jq -c '.recent_unfinished_sessions[]'
check 'the unfinished session' "$r" "any(.recent_unfinished_sessions[]; .id == \"$id\")"
next=$(curl -s "$N/sessions?limit=1" | jq -r '.next_cursor // empty')   # null on the last page
[ -n "$next" ] && curl -s "$N/sessions?limit=1&cursor=$next" | jq -c '.sessions[] | {id, title}'
check 'the second page' "$(curl -s "$N/sessions?limit=1&cursor=$next")" "[.sessions[].id] == [\"$id\"]"
curl -s -D - -o /dev/null "$N/sessions?since=7d&limit=1" | grep -i '^link:'   # or follow the Link header: same filters, since pinned
curl -s -X DELETE $N/sessions/$id2 | jq -c   # a tombstone event; lists leave the session out, audits still reach it
check_error_next
check 'the deleted session answers 404, as intended' "$(curl -s "$N/sessions/$id2")" '.status == 404'

# README: operations
curl -s $N/healthz | jq -c
curl -s $N/me | jq -c   # who the server takes you for: {role, name, auth}
check 'who you are' "$(curl -s $N/me)" '. == {role: "operator", name: "anonymous", auth: false}'
curl -s $N/projections | jq -c '.projections[] | {name, version, state, position, lag}'
curl -s $N/projections | jq '.projections[] | select(.state == "rebuilding") | {name, rebuild}'   # a rebuild's progress
check 'the projections' "$(curl -s $N/projections)" '[.projections[].state] | unique == ["live"]'
curl -s $N/metrics | grep '^nomos_executions'   # Prometheus text: events, refusals, executions, approvals, projection lag
check 'the metrics' "$(curl -s $N/metrics | grep -c '^nomos_projection_lag')" '. == 7'
curl -s $N/metrics | grep -E '^nomos_(event_loop_delay|gc_pause)'   # this server's pauses: how late its event loop ran since the last scrape, time in garbage collection
check 'the pauses' "$(curl -s $N/metrics | grep -cE '^nomos_(event_loop_delay_(p50|p99|max)_seconds|gc_pause_seconds_total)')" '. >= 4'
curl -s $N/metrics | grep '^nomos_projector_'   # live batches committed in one round trip, and tries that went two (PostgreSQL; expected to rise with several servers appending)
check 'the one-round-trip batches' "$(curl -s $N/metrics | grep -cE '^nomos_projector_(batches_one_round_trip|guesses_missed)_total')" '. == 2'
curl -s $N/openapi.json | jq '.paths | keys'   # every endpoint, from the zod schemas that validate it; UI at /docs
check_error_next
curl -sN -m 2 $N/changes || true   # event stream: {position} each time the read models move (any server); two seconds of it
check 'the change stream (ended after its 2 s by curl -m 2, as intended)' "$(curl -sN -m 2 $N/changes | sed -n 's/^data: //p' | head -n 1)" '.position > 0'

# README: the verifiable log
curl -s $N/log | jq -c '{tree_size, lag_events, origin}'   # how far the log is sealed
check 'the log is sealed, with a checkpoint' "$(curl -s $N/log)" '.sealed and .tree_size > 0 and .checkpoint.tree_size > 0 and (.origin | startswith("nomos/"))'
curl -s $N/log/checkpoint          # the latest checkpoint, exactly as signed
check 'the checkpoint is a signed note' "$(curl -s $N/log/checkpoint | jq -Rs .)" 'split("\n") | (.[0] | startswith("nomos/")) and (.[3] == "") and (.[4] | startswith("— nomos/"))'
curl -s $N/log/public-key          # the key that signs it (PEM)
check 'the public key' "$(curl -s $N/log/public-key | jq -Rs .)" 'startswith("-----BEGIN PUBLIC KEY-----")'
curl -s "$N/log/proof/inclusion?position=1" | jq -c '{leaf_index, tree_size, hashes}'   # event 1 in the latest checkpoint's tree
check 'event 1 is leaf 0' "$(curl -s "$N/log/proof/inclusion?position=1")" '.leaf_index == 0 and (.leaf | @base64d | fromjson | .position == 1)'
curl -s "$N/log/proof/consistency?from=1&to=$(curl -s $N/log | jq .checkpoint.tree_size)" | jq -c .hashes
check 'a consistency proof' "$(curl -s "$N/log/proof/consistency?from=1&to=$(curl -s $N/log | jq .checkpoint.tree_size)")" '.from == 1 and (.hashes | type == "array")'

# end of the README's blocks
echo "tour: done, $checks checks held"
