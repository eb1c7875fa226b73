// What the API answers, as zod schemas: the read models' views and the commands' replies. The OpenAPI document
// is generated from them and the type provider checks each handler's answer against them at compile time.
import { z } from 'zod';
import { Actor, Client } from '../domain/messages.ts';
import { Attributes, EntityLifecycle, EntityType, PinnedBy } from '../domain/entity/events.ts';
import { KnowledgeKind } from '../domain/knowledge/events.ts';
import { Outcome, RefusalReason, StepStatus, Verdict } from '../domain/session/events.ts';
import { ApprovalStatus, ExecutionStatus } from '../projections/executions.ts';
import { apiSchemas } from './responses.ts';

/** A run's target as a client names it. */
export const TargetSlug = z.string().min(3).max(200).regex(/^[a-z]+:[A-Za-z0-9._-]+$/, 'must be an entity slug such as host:strong or lxc:rclone');

export const Uuid = z.uuid();
export const Time = z.string().meta({ format: 'date-time' });
const Position = z.number().int().describe('global position of an event in the log');
export const AsOf = { as_of_position: Position.describe('the position of the last event the read models answering have applied') };

/** Where a command's reply leaves the log: pass `position` as min_position to read the write back. */
export const Written = { position: Position.describe('position of the last event appended: pass it as min_position to read your own write') };

// ---- sessions ----

export const CommandReply = z
  .looseObject({ session_id: Uuid, ...Written, events: z.array(z.string()).describe('the types of the events appended') })
  .describe(
    'The session, the position and the events appended, and what the command adds: message_id; tool_call_id, result_truncated, result_original_bytes; goal_id, title, superseded_goal_id, recent_unfinished_sessions, hint (set_goal); generation, steps, replaced_steps (propose_plan); seq, status, from; outcome, closed_steps, cancelled_approvals (complete_task)',
  );

/** A principal that may own a session or hold an assent window, written `role:id` (operator:alice, agent:rclone-bot). */
export const PrincipalName = z
  .string()
  .max(210)
  .regex(/^(operator|agent):[^\s:]{1,200}$/, 'must be role:id with role operator or agent, such as agent:rclone-bot')
  .transform((value): Actor => {
    const at = value.indexOf(':');
    return { role: value.slice(0, at) as 'operator' | 'agent', id: value.slice(at + 1) };
  });

export const HandOverReply = z.object({ session_id: Uuid, ...Written, events: z.array(z.string()), owner: Actor });

export const Session = z.object({
  id: Uuid,
  title: z.string().nullable(),
  goal: z.string().nullable(),
  status: z.enum(['active', 'done', 'failed']),
  outcome: Outcome.nullable(),
  summary: z.string().nullable(),
  blocker: z.string().nullable(),
  blocker_evidence: z.object({ source: z.enum(['event', 'text', 'summary', 'none']), detail: z.string() }).nullable(),
  pending_approvals: z.number().int(),
  approvals_requested: z.number().int(),
  approvals_expired: z.number().int(),
  message_count: z.number().int(),
  user_message_count: z.number().int(),
  assistant_message_count: z.number().int(),
  tool_call_count: z.number().int(),
  turn_count: z.number().int(),
  top_tools: z.array(z.object({ name: z.string(), count: z.number().int() })),
  entities: z.array(z.string()),
  executions_count: z.number().int(),
  failed_executions: z.number().int(),
  targets: z.array(z.string()),
  created_at: Time,
  last_active_at: Time,
  closed_at: Time.nullable(),
  duration_seconds: z.number().int(),
  owner: Actor.nullable().describe('whom the session belongs to'),
  deleted: z.boolean().describe('listed only with include_deleted=true (operators and auditors)'),
  deleted_at: z.string().nullable(),
  deleted_by: Actor.nullable(),
  model_calls: z.number().int().nullable().describe('model calls recorded, failed ones too (null: none recorded)'),
  input_tokens: z.number().int().nullable().describe("the provider's figures, summed (null: none reported)"),
  output_tokens: z.number().int().nullable(),
  cached_input_tokens: z.number().int().nullable(),
  closed_by: Actor.nullable().describe('who completed the task (system:executor: Nomos closed it, abandoned); null while open'),
  outcome_disputed: z.boolean().describe('closed as success, but every change of the task was denied, refused or failed'),
  dispute: z
    .object({
      detail: z.string(),
      changes: z.array(z.object({ execution_id: z.string(), target: z.string(), command: z.string(), risk_class: z.string(), status: z.string() })),
    })
    .nullable()
    .describe('the evidence of outcome_disputed: in words, and each change of the task and how it ended'),
  cost: z.number().nullable().optional().describe('GET /sessions/:id only, when NOMOS_MODEL_PRICES is set: null when a model it used has no price'),
});

export const SessionPage = z.object({
  sessions: z.array(Session.partial().required({ id: true })).describe('newest first; with `fields`, only those fields and id'),
  next_cursor: z.string().nullable().describe('the next page (null on the last)'),
  ...AsOf,
});

const ToolCallStatus = z.enum(['requested', 'completed', 'failed']);
const MessageToolCall = z.object({
  id: z.string(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
  result: z.unknown(),
  error: z.string().nullable(),
  status: ToolCallStatus,
});

export const SessionDetail = z.object({
  session_id: Uuid,
  session: Session,
  messages: z.array(
    z.object({
      id: z.string(),
      role: z.enum(['user', 'assistant']),
      content: z.object({ text: z.string().nullable(), tool_calls: z.array(MessageToolCall) }),
      created_at: Time,
    }),
  ),
  ...AsOf,
});

export const ToolCalls = z.array(
  MessageToolCall.extend({
    message_id: z.string(),
    seq: z.number().int(),
    requested_at: Time,
    completed_at: Time.nullable(),
    duration_ms: z.number().int().nullable(),
    actor: Actor.nullable(),
    client: Client.nullable(),
  }),
);

export const Plan = z.object({
  session_id: Uuid,
  current_generation: z.number().int().nullable(),
  steps: z.array(
    z.object({
      generation: z.number().int(),
      seq: z.number().int(),
      title: z.string(),
      command: z.string().nullable(),
      target: z.string().nullable(),
      status: StepStatus,
      updated_at: Time,
    }),
  ),
  goals: z.array(
    z.object({
      goal_id: z.string(),
      goal: z.string(),
      status: z.enum(['open', 'superseded', 'completed']),
      outcome: Outcome.nullable(),
      summary: z.string().nullable(),
      set_at: Time,
      closed_at: Time.nullable(),
    }),
  ),
  ...AsOf,
});

export const SessionEvents = z.object({
  session_id: Uuid,
  version: z.number().int().describe("the stream's version: its last event's stream_position"),
  next_cursor: z.string().nullable().describe('the next page (null on the last)'),
  events: z.array(
    z.object({
      event_id: z.string(),
      type: z.string(),
      stream_position: z.number().int(),
      position: Position,
      data: z.record(z.string(), z.unknown()),
      metadata: z.record(z.string(), z.unknown()),
      recorded_at: Time,
    }),
  ),
});

// ---- executions and approvals ----

export const RunReply = z.object({
  execution_id: Uuid,
  target: z.string(),
  status: z.enum(['succeeded', 'failed', 'timed_out', 'pending', 'approval_required', 'refused']),
  verdict: Verdict,
  ...Written,
  exit_code: z.number().int().nullable().optional(),
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  approval_id: Uuid.optional().describe('approval_required: approve it with POST /approvals/{id}/approve'),
  expires_at: Time.optional(),
  reason: RefusalReason.optional().describe('refused: why'),
  detail: z.string().optional(),
  hint: z.string().optional(),
});

export const InspectReply = z.object({
  path: z.string(),
  rows: z.array(
    z.object({
      target: z.string(),
      execution_id: Uuid.nullable(),
      status: RunReply.shape.status,
      exit_code: z.number().int().nullable(),
      output: z.string(),
      errors: z.string(),
    }),
  ),
});

export const Execution = z.object({
  id: Uuid,
  session_id: Uuid,
  target: z.string(),
  command: z.string(),
  verdict: Verdict,
  known_long: z.boolean(),
  status: ExecutionStatus,
  approval_id: Uuid.nullable(),
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  error: z.string().nullable(),
  stdout_tail: z.string().nullable(),
  stderr_tail: z.string().nullable(),
  refusal: z.string().nullable(),
  requested_by: Actor,
  requested_at: Time,
  started_at: Time.nullable(),
  finished_at: Time.nullable(),
  duration_ms: z.number().int().nullable(),
  session_deleted: z.boolean().describe('its session was deleted (shown only with include_deleted=true)'),
  decision: z.enum(['allow', 'ask', 'deny']).nullable().describe("the operator's policy's decision (null: requested before the policy was consulted)"),
  rule_id: z.string().nullable().describe('the rule that decided: a rule id, classifier (no rule matched) or floor (the floor overrode an allow)'),
  policy_version: z.number().int().nullable().describe('the policy version in force (0: none)'),
});

/**
 * As recorded, and while it runs (here or on another server) what it printed so far and whether it looks hung.
 * The service types it as a plain record, so even execution_id, always there, is optional here.
 */
export const ExecutionStatusReply = Execution.partial()
  .extend({
    execution_id: Uuid.optional(),
    status: z.union([ExecutionStatus, z.enum(['starting', 'hung'])]).optional(),
    stdout_so_far: z.string().optional(),
    stderr_so_far: z.string().optional(),
    idle_ms: z.number().int().optional(),
    running_ms: z.number().int().optional(),
    server: z.string().optional().describe('the server running it'),
    advice: z.string().optional().describe('hung: what to inspect instead of retrying'),
    ...AsOf,
  })
  .describe('The execution as recorded; while it runs, its output so far, idle and running time and the server running it');

export const Approval = z.object({
  id: Uuid,
  session_id: Uuid,
  execution_id: Uuid,
  command: z.string(),
  target: z.string(),
  risk_class: z.string(),
  status: ApprovalStatus,
  requested_by: Actor,
  requested_at: Time,
  expires_at: Time,
  decided_by: Actor.nullable(),
  decided_at: Time.nullable(),
  decision_reason: z.string().nullable(),
  session_goal: z.string().nullable(),
  verdict: Verdict.nullable(),
  session_deleted: z.boolean().describe('its session was deleted (listed only with include_deleted=true)'),
  rule_id: z.string().nullable().describe('the rule that asked for it, or classifier / floor (null: before the policy was consulted)'),
  policy_version: z.number().int().nullable(),
  requested_position: z
    .number()
    .int()
    .nullable()
    .describe("the ApprovalRequested event's position in the log: GET /sessions/:id?at_position= shows the session as it stood then (null only until a read model kept from before version 4 is rebuilt)"),
});

/** How the operator's channels were told of an approval (src/notify/outbox.ts, notificationsOfApproval). */
export const ApprovalNotification = z.object({
  channel: z.string().describe("the channel's name (never a secret)"),
  kind: z.enum(['approval_requested', 'approval_expiring', 'turn_failed', 'execution_hung']),
  status: z.enum(['pending', 'delivered', 'failed', 'skipped']).describe('pending: due (again) at next_attempt_at; failed: given up; skipped: the approval was decided first'),
  attempts: z.number().int(),
  last_error: z.string().nullable().describe("the latest attempt's error (null when it went through)"),
  last_attempt_at: Time.nullable(),
  next_attempt_at: Time.nullable(),
  delivered_at: Time.nullable(),
  note: z.string().nullable(),
});

// ---- fleet ----

const EntityHealth = z
  .object({
    reachable: z.boolean().nullable().describe('true: the latest word from the host was a contact; false: a failure; null: never tried'),
    last_contact_at: Time.nullable().describe('a command ran on it (whatever its exit code), or a reachability check reached it'),
    last_failure_at: Time.nullable().describe('a connection refused or timed out, a host key that did not match, or a check that failed'),
    last_error: z.string().nullable().describe("the latest failure's error"),
    checked_at: Time.nullable().describe('when the reachability check (NOMOS_REACHABILITY_EVERY) last looked at it'),
  })
  .nullable()
  .describe('hosts only');
const EntityRetired = z.object({ at: Time, by: z.string().nullable(), reason: z.string() }).nullable().describe('set when the entity is retired');

export const Entity = z.object({
  slug: z.string(),
  type: EntityType,
  name: z.string(),
  state: EntityLifecycle,
  parent: z.string().nullable(),
  pve_id: z.number().int().nullable(),
  ssh: z.object({ host: z.string(), port: z.number().int(), user: z.string(), host_key: z.string().nullable(), host_key_pinned_by: PinnedBy.nullable() }).nullable(),
  attributes: Attributes,
  retired: EntityRetired,
  health: EntityHealth,
  children: z.array(z.string()).optional().describe("a host read on its own: its guests' slugs"),
  created_at: Time,
  updated_at: Time,
});

export const EntityCommandReply = z.object({
  slug: z.string(),
  position: Position.describe('position of the last event appended; -1 when the command changed nothing'),
  events: z.array(z.string()),
});

const Changed = z.enum(['created', 'updated', 'unchanged']);

export const RegistrationReply = z.object({
  entities: z.array(z.object({ slug: z.string(), result: Changed, position: Position })).describe('in the order sent'),
  position: Position.describe('the largest position above: pass it as min_position to read the inventory back'),
});

export const Relations = z.object({
  slug: z.string(),
  outgoing: z.array(z.object({ to: z.string(), type: z.string() })),
  incoming: z.array(z.object({ from: z.string(), type: z.string() })),
  ...AsOf,
});

// ---- knowledge ----

export const KnowledgeSummary = z.object({
  id: Uuid,
  kind: KnowledgeKind,
  title: z.string(),
  about: z.array(z.string()),
  tags: z.array(z.string()),
  snippet: z.string(),
  updated_at: Time,
});

export const Knowledge = z.object({
  id: Uuid,
  kind: KnowledgeKind,
  title: z.string(),
  body: z.string(),
  about: z.array(z.string()),
  tags: z.array(z.string()),
  session_id: Uuid.nullable(),
  created_at: Time,
  updated_at: Time,
});

export const UpsertKnowledgeReply = z.object({ knowledge_id: Uuid, result: Changed, ...Written, events: z.array(z.string()) });

// Listed once under components, by name, so that a generated client has a type of each.
for (const [id, schema] of Object.entries({ CommandReply, Session, Verdict, RunReply, Execution, Approval, Entity, KnowledgeSummary, Knowledge })) {
  schema.register(apiSchemas, { id });
}
