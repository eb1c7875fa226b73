// The commands a session accepts, exactly as clients send them to POST /sessions/:id/commands.
// Imperative names; unknown fields are refused so a typo never passes silently.
import { z } from 'zod';
import { CommandText, pathTextProblem } from '../command-text.ts';
import type { Actor } from '../messages.ts';
import { type ModelCall, Outcome, type RefusalReason, type ShadowDecision, type TurnFailureReason, type Verdict } from './events.ts';

const text = z.string().min(1).max(100_000);

/** JSON nested deeper than this is refused: no tool needs it, and PostgreSQL's jsonb refuses deep nesting. */
export const MAX_JSON_DEPTH = 32;

function depthExceeds(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit === 0) return true;
  return Object.values(value).some((v) => depthExceeds(v, limit - 1));
}

/** A tool call's arguments, serialised as JSON, in UTF-8 bytes: far more than any tool's own schema lets through. */
export const MAX_TOOL_ARGS_BYTES = 64 * 1024;

const Args = z
  .record(z.string(), z.unknown())
  .refine((v) => !depthExceeds(v, MAX_JSON_DEPTH), `args nest deeper than ${MAX_JSON_DEPTH} levels`)
  .superRefine((v, ctx) => {
    const bytes = new TextEncoder().encode(JSON.stringify(v)).length;
    if (bytes > MAX_TOOL_ARGS_BYTES) ctx.addIssue({ code: 'custom', message: `args are ${bytes} bytes as JSON, over the limit of ${MAX_TOOL_ARGS_BYTES} bytes`, input: v });
  });

export const sessionCommandSchemas = {
  post_user_message: z.strictObject({ type: z.literal('post_user_message'), text }),
  record_assistant_message: z.strictObject({ type: z.literal('record_assistant_message'), text: z.string().max(100_000) }),
  record_tool_call_requested: z.strictObject({
    type: z.literal('record_tool_call_requested'),
    tool_call_id: z.string().min(1).max(200),
    name: z.string().min(1).max(200),
    args: Args,
  }),
  record_tool_call_completed: z.strictObject({
    type: z.literal('record_tool_call_completed'),
    tool_call_id: z.string().min(1).max(200),
    result: z.unknown().refine((v) => !depthExceeds(v, MAX_JSON_DEPTH), `result nests deeper than ${MAX_JSON_DEPTH} levels`).optional(),
    error: z.string().max(100_000).optional(),
  }),
  set_goal: z.strictObject({ type: z.literal('set_goal'), goal: z.string().trim().min(1).max(10_000) }),
  propose_plan: z.strictObject({
    type: z.literal('propose_plan'),
    steps: z
      .array(
        z.strictObject({
          title: z.string().trim().min(1).max(1_000),
          // What an approver later reads as the step's command: held to what the gate takes to run.
          command: CommandText.optional(),
          target: z.string().max(200).refine((t) => pathTextProblem(t) === null, 'a step target holds no control character or bidirectional mark').optional(),
        }),
      )
      .min(1)
      .max(100),
  }),
  update_plan_step: z.strictObject({
    type: z.literal('update_plan_step'),
    seq: z.number().int().positive(),
    status: z.enum(['running', 'done', 'skipped', 'failed']),
  }),
  complete_task: z.strictObject({ type: z.literal('complete_task'), outcome: Outcome, summary: z.string().max(20_000) }),
} as const;

export const SessionCommand = z.discriminatedUnion('type', [
  sessionCommandSchemas.post_user_message,
  sessionCommandSchemas.record_assistant_message,
  sessionCommandSchemas.record_tool_call_requested,
  sessionCommandSchemas.record_tool_call_completed,
  sessionCommandSchemas.set_goal,
  sessionCommandSchemas.propose_plan,
  sessionCommandSchemas.update_plan_step,
  sessionCommandSchemas.complete_task,
]);
export type SessionCommand = z.infer<typeof SessionCommand>;

/** Commands the domain handles that do not come through the commands endpoint. */
export type SessionLifecycleCommand =
  | { type: 'start_session'; session_id: string }
  | { type: 'delete_session'; reason: string | null }
  /** An operator gives the session to another principal (an agent), who may then write to it. */
  | { type: 'hand_over'; to: Actor };

/** What ran, as the executor reports it. */
export type ExecutionOutcome =
  | { kind: 'succeeded'; stdout_tail: string; stderr_tail: string; duration_ms: number }
  | { kind: 'failed'; exit_code: number | null; signal: string | null; error: string | null; stdout_tail: string; stderr_tail: string; duration_ms: number }
  | { kind: 'timed_out'; limit_ms: number; stdout_tail: string; stderr_tail: string; duration_ms: number };

/**
 * The steps of running a command, decided on the session's state. The command layer classifies, hashes and
 * resolves the target (I/O and hashing stay out of the domain) and passes the results in.
 */
export type SessionExecutionCommand =
  | {
      type: 'request_execution';
      execution_id: string;
      target: string;
      command: string;
      verdict: Verdict;
      rules_version: string;
      command_hash: string;
      binding: string;
      known_long: boolean;
      approval_ttl_ms: number;
      /** Set when the command layer already knows nothing can reach the target (no key, no address): refused at once, never asked for. */
      unreachable?: string;
      /** What a candidate policy in shadow would decide: recorded with the request, never obeyed. */
      shadow?: ShadowDecision;
    }
  | { type: 'start_execution'; execution_id: string; binding: string }
  | { type: 'finish_execution'; execution_id: string; outcome: ExecutionOutcome }
  | { type: 'refuse_execution'; execution_id: string; reason: RefusalReason; detail: string }
  | { type: 'approve'; approval_id: string }
  | { type: 'deny'; approval_id: string; reason: string }
  | { type: 'expire_approval'; approval_id: string }
  /** for: whose commands run under it; the session's owner when absent. */
  | { type: 'open_assent'; minutes: number; for?: Actor };

/** The agent's turns: started, asked to stop, failed, ended. */
export type SessionTurnCommand =
  | { type: 'start_turn'; turn_id: string; trigger: 'user_message' | 'continue' | 'execution_finished' }
  | { type: 'cancel_turn' }
  | { type: 'fail_turn'; turn_id: string; reason: TurnFailureReason; detail: string }
  | { type: 'end_turn'; turn_id: string; status: 'completed' | 'failed' | 'cancelled'; model_calls: number; seen_version?: number }
  | { type: 'record_model_call'; call: ModelCall };
