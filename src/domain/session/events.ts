// Every event a session stream can hold, each with its zod schema and schema version. Events are facts in
// the past tense; the read models and the deciders both parse them through these schemas.
import { z } from 'zod';
import { inPlaceParser } from '../in-place.ts';
import { Actor } from '../messages.ts';

export const Outcome = z.enum(['success', 'partial', 'failed']);
export type Outcome = z.infer<typeof Outcome>;

export const StepStatus = z.enum(['pending', 'running', 'done', 'skipped', 'failed', 'replaced']);
export type StepStatus = z.infer<typeof StepStatus>;

/**
 * output_limit: the answer was cut at the provider's output limit (finish_reason length); context_exceeded: even
 * fitted, the prompt did not fit the model's window.
 */
export const TurnFailureReason = z.enum(['model_empty_response', 'model_refusal', 'provider_error', 'iteration_limit', 'cancelled', 'output_limit', 'context_exceeded']);
export type TurnFailureReason = z.infer<typeof TurnFailureReason>;

/** Largest tool result kept in an event; larger ones are cut and their original size recorded. */
export const MAX_TOOL_RESULT_BYTES = 4096;

const id = z.string().min(1).max(200);

export const RiskClass = z.enum(['reversible_low', 'config_mutation', 'destructive']);
export type RiskClass = z.infer<typeof RiskClass>;

export const Decision = z.enum(['allow', 'ask', 'deny']);

/**
 * The classifier's verdict, as recorded with the execution it decided, and what decided it under the operator's
 * policy: `decision` (allow: ran at once; ask: waited for an approval; deny: refused), the deciding `rule_id` (a
 * rule's id, `classifier` when no rule matched, `floor` when the floor turned a rule's allow into ask) and the
 * `policy_version` in force (0: none). Absent on executions requested before the policy was consulted.
 */
export const Verdict = z.object({
  risk_class: RiskClass,
  reason: z.string(),
  rule: z.string(),
  inner_commands: z.array(z.string()),
  decision: Decision.optional(),
  rule_id: z.string().max(200).optional(),
  policy_version: z.number().int().nonnegative().optional(),
});
export type Verdict = z.infer<typeof Verdict>;

/**
 * lost: approved, but the server that was to start it stopped first, and the approval's window had passed when
 * another server found it. policy_denied: a rule of the operator's policy refuses it (the verdict names the rule).
 */
export const RefusalReason = z.enum(['retry_cap', 'already_running', 'host_key_mismatch', 'binding_mismatch', 'unreachable', 'lost', 'session_deleted', 'policy_denied']);

/** What a candidate policy in shadow would have decided for an execution (recorded, never obeyed). */
export const ShadowDecision = z.object({ shadow: z.number().int().positive(), decision: Decision, rule_id: z.string().max(200) });
export type ShadowDecision = z.infer<typeof ShadowDecision>;
export type RefusalReason = z.infer<typeof RefusalReason>;

const count = z.number().int().nonnegative();

/** How the context of a model call was fitted to its budget (src/agent/context-fit.ts). */
export const ContextFitRecord = z.object({
  budget_tokens: count,
  estimated_tokens: count,
  messages: count,
  /** Tool results replaced by a stub that names get_tool_result. */
  elided_results: count,
  /** Turns folded into the digest of what happened before. */
  folded_turns: count,
});

/** A failed call: how (src/ports/llm.ts LlmFailureKind), the provider's status and code, and its words. */
export const ModelCallError = z.object({ kind: z.string(), status: z.number().int().nullable(), code: z.string().nullable(), message: z.string() });

export const ModelCall = z.object({
  call_id: id,
  turn_id: id,
  /** 1 for a call's first try; a retry of the same context (rate limit, cut stream, a tighter budget) counts on. */
  attempt: z.number().int().positive(),
  model: z.string(),
  /** The host of the provider's base URL: never the key. */
  provider_host: z.string(),
  input_tokens: count.nullable(),
  output_tokens: count.nullable(),
  cached_input_tokens: count.nullable(),
  estimated_input_tokens: count,
  duration_ms: count,
  first_token_ms: count.nullable(),
  finish_reason: z.string().nullable(),
  context: ContextFitRecord,
  error: ModelCallError.nullable(),
});
export type ModelCall = z.infer<typeof ModelCall>;

const Tails = { stdout_tail: z.string(), stderr_tail: z.string(), duration_ms: z.number().int().nonnegative() };

export const sessionEventSchemas = {
  /** owner: the principal the session belongs to; absent in events written before owners, where it is the event's actor. */
  SessionStarted: z.object({ session_id: id, owner: Actor.optional() }),
  /** An operator gave the session to another principal, who owns it from now on. */
  SessionHandedOver: z.object({ from: Actor, to: Actor }),
  /** Activity arrived after the session had ended: it is open again until the next complete_task. */
  SessionReopened: z.object({ previous_status: z.enum(['done', 'failed']) }),
  UserMessagePosted: z.object({ message_id: id, text: z.string() }),
  /** The final text of the current turn, held by the turn's assistant message. */
  AssistantMessageRecorded: z.object({ message_id: id, text: z.string() }),
  ToolCallRequested: z.object({ tool_call_id: id, message_id: id, name: z.string().min(1), args: z.record(z.string(), z.unknown()) }),
  ToolCallCompleted: z.object({
    tool_call_id: id,
    result: z.unknown(),
    error: z.string().nullable(),
    /** Set when the result was cut to MAX_TOOL_RESULT_BYTES: the size of the original, serialised as JSON. */
    result_original_bytes: z.number().int().nonnegative().nullable(),
  }),
  GoalSet: z.object({ goal_id: id, goal: z.string().min(1), title: z.string() }),
  GoalSuperseded: z.object({ goal_id: id, superseded_by: id }),
  PlanProposed: z.object({
    generation: z.number().int().positive(),
    steps: z.array(z.object({ seq: z.number().int().positive(), title: z.string().min(1), command: z.string().optional(), target: z.string().optional() })),
  }),
  PlanStepsReplaced: z.object({
    by_generation: z.number().int().positive(),
    steps: z.array(z.object({ generation: z.number().int().positive(), seq: z.number().int().positive() })),
  }),
  PlanStepUpdated: z.object({
    generation: z.number().int().positive(),
    seq: z.number().int().positive(),
    from: StepStatus,
    status: StepStatus,
    /** Set when complete_task closed the step rather than the agent. */
    closed_by_task: z.boolean(),
  }),
  TaskCompleted: z.object({
    goal_id: id.nullable(),
    outcome: Outcome,
    summary: z.string(),
    status: z.enum(['done', 'failed']),
  }),
  /** run(target, command) was asked for: what, where, and the classifier's verdict on it. */
  ExecutionRequested: z.object({
    execution_id: id,
    target: z.string(),
    command: z.string(),
    verdict: Verdict,
    rules_version: z.string(),
    /** Hash of the final command on its final target (wrappers aside): the retry cap counts attempts that did not succeed per hash. */
    command_hash: z.string(),
    /** Hash of exactly what will run (command, resolved target, rules version): an approval is bound to it. */
    binding: z.string(),
    /** Known to take long (apt upgrade, rclone sync…): answered as pending at once. */
    known_long: z.boolean(),
    /** What the candidate policy in shadow, if one was, would have decided. */
    shadow: ShadowDecision.optional(),
  }),
  ExecutionRefused: z.object({ execution_id: id, reason: RefusalReason, detail: z.string() }),
  ExecutionStarted: z.object({ execution_id: id }),
  ExecutionSucceeded: z.object({ execution_id: id, exit_code: z.literal(0), ...Tails }),
  ExecutionFailed: z.object({ execution_id: id, exit_code: z.number().int().nullable(), signal: z.string().nullable(), error: z.string().nullable(), ...Tails }),
  /** The hard limit ended it: not the same as failing, and counted by the retry cap all the same. */
  ExecutionTimedOut: z.object({ execution_id: id, limit_ms: z.number().int().positive(), ...Tails }),
  ApprovalRequested: z.object({
    approval_id: id,
    execution_id: id,
    command: z.string(),
    target: z.string(),
    risk_class: z.string(),
    binding: z.string(),
    expires_at: z.iso.datetime({ offset: true }),
    /** The rule that asked for it (see Verdict), and the policy's version; absent before the policy was consulted. */
    rule_id: z.string().max(200).optional(),
    policy_version: z.number().int().nonnegative().optional(),
  }),
  ApprovalGranted: z.object({ approval_id: id }),
  ApprovalDenied: z.object({ approval_id: id, reason: z.string() }),
  ApprovalExpired: z.object({ approval_id: id }),
  ApprovalCancelled: z.object({ approval_id: id, reason: z.string() }),
  /** Until `until`, config_mutation commands of this session run without asking, when `for` runs them. */
  /**
   * for: the one actor whose commands run under the window (absent in events written before it was named, where it
   * is the session's owner at the time).
   */
  AssentOpened: z.object({ until: z.iso.datetime({ offset: true }), minutes: z.number().int().positive(), for: Actor.optional() }),
  AssentClosed: z.object({ reason: z.string() }),
  /** The agent began a turn: after a user message, by hand (continue), or by itself once an execution it waited on ended. */
  TurnStarted: z.object({ turn_id: id, trigger: z.enum(['user_message', 'continue', 'execution_finished']) }),
  /** Someone asked the running turn to stop; the agent stops between tool calls. */
  TurnCancelRequested: z.object({ turn_id: id }),
  /** The turn is over; a chat stream ends with it (SSE `done`). */
  /**
   * seen_version: the stream version the turn's last model call was given (absent in events written before
   * it was recorded): an execution's end after it was not seen by the agent, which then carries on.
   */
  TurnEnded: z.object({ turn_id: id, status: z.enum(['completed', 'failed', 'cancelled']), model_calls: z.number().int().nonnegative(), seen_version: z.number().int().min(-1).optional() }),
  /**
   * One call to the model within a turn, failed calls too: what it cost as the provider reported it (null where
   * it did not), the local estimate of the prompt, how long it took, and how the context was fitted to the budget.
   */
  ModelCallRecorded: ModelCall,
  /** A turn ended without a usable answer. */
  TurnFailed: z.object({ reason: TurnFailureReason, detail: z.string() }),
  /** Tombstone: read models drop the session; its events stay. */
  SessionDeleted: z.object({ reason: z.string().nullable() }),
} as const;

export const SESSION_EVENT_VERSION = 1;

type Schemas = typeof sessionEventSchemas;
export type SessionEventType = keyof Schemas;
export type SessionEvent = { [K in SessionEventType]: { type: K; data: z.infer<Schemas[K]> } }[SessionEventType];
export type SessionEventOf<K extends SessionEventType> = Extract<SessionEvent, { type: K }>;

export function isSessionEventType(type: string): type is SessionEventType {
  return Object.hasOwn(sessionEventSchemas, type);
}

const payloadParsers = Object.fromEntries(Object.entries(sessionEventSchemas).map(([type, schema]) => [type, inPlaceParser(schema)])) as {
  [K in SessionEventType]: (data: unknown) => z.output<Schemas[K]>;
};

/**
 * Parses a stored event back into the union; throws on an unknown type or a malformed payload. A payload that
 * already is what its schema describes is returned as it is, not copied (so treat it as read-only).
 */
export function parseSessionEvent(type: string, data: unknown): SessionEvent {
  if (!isSessionEventType(type)) throw new Error(`unknown session event type ${type}`);
  return { type, data: payloadParsers[type](data) } as SessionEvent;
}
