// Model calls recorded as the agent records them (start_turn, record_model_call for each, end_turn), for tests of
// the read models and pages that show what the calls cost, without a model to call.
import { randomUUID } from 'node:crypto';
import type { CommandContext, CommandDeps } from '../../src/commands/context.ts';
import { runSessionCommand } from '../../src/commands/session.ts';
import type { ModelCall, TurnFailureReason } from '../../src/domain/session/events.ts';

export const AGENT: CommandContext = { actor: { role: 'agent', id: 'nomos' }, actsForOwner: true };
export const FIT = { budget_tokens: 7_000, estimated_tokens: 1_200, messages: 4, elided_results: 0, folded_turns: 0 };

/** A successful call of gpt-4o-mini, 1 000 tokens in and 100 out, with `over` changed. */
export function modelCall(turnId: string, over: Partial<ModelCall> = {}): ModelCall {
  return {
    call_id: randomUUID(),
    turn_id: turnId,
    attempt: 1,
    model: 'gpt-4o-mini',
    provider_host: '127.0.0.1:9',
    input_tokens: 1_000,
    output_tokens: 100,
    cached_input_tokens: 0,
    estimated_input_tokens: 990,
    duration_ms: 250,
    first_token_ms: 40,
    finish_reason: 'stop',
    context: FIT,
    error: null,
    ...over,
  };
}

/** A turn of the session with these calls (failed with `failure` when given); answers the calls and the position it ended at. */
export async function recordTurn(
  deps: CommandDeps,
  session: string,
  calls: ReadonlyArray<Partial<ModelCall>>,
  failure?: { reason: TurnFailureReason; detail: string },
): Promise<{ calls: ModelCall[]; position: number }> {
  const turnId = randomUUID();
  await runSessionCommand(deps, session, { type: 'start_turn', turn_id: turnId, trigger: 'user_message' }, AGENT);
  const recorded = calls.map((over) => modelCall(turnId, over));
  for (const call of recorded) await runSessionCommand(deps, session, { type: 'record_model_call', call }, AGENT);
  if (failure) await runSessionCommand(deps, session, { type: 'fail_turn', turn_id: turnId, ...failure }, AGENT);
  const { position } = await runSessionCommand(deps, session, { type: 'end_turn', turn_id: turnId, status: failure ? 'failed' : 'completed', model_calls: calls.length }, AGENT);
  return { calls: recorded, position };
}
