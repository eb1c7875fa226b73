// Rules for the agent's turns: one at a time per session, a cancel reaches only a running turn, and a turn
// ends once. The agent loop itself (model calls, tools) lives in the command layer.
import { RuleViolation } from '../messages.ts';
import type { SessionTurnCommand } from './commands.ts';
import type { SessionEvent } from './events.ts';
import type { SessionState } from './state.ts';

export function decideTurn(command: SessionTurnCommand, state: SessionState): SessionEvent[] {
  switch (command.type) {
    case 'start_turn':
      if (state.openTurn !== null) {
        throw new RuleViolation('turn_running', `Turn ${state.openTurn.turnId} is still running in this session; wait for it to end, or cancel it (POST /sessions/:id/cancel).`);
      }
      return [{ type: 'TurnStarted', data: { turn_id: command.turn_id, trigger: command.trigger } }];
    case 'cancel_turn':
      if (state.openTurn === null) throw new RuleViolation('no_turn_running', 'No turn is running in this session: there is nothing to cancel.');
      if (state.openTurn.cancelRequested) return [];
      return [{ type: 'TurnCancelRequested', data: { turn_id: state.openTurn.turnId } }];
    case 'fail_turn':
      requireOpen(state, command.turn_id);
      return [{ type: 'TurnFailed', data: { reason: command.reason, detail: command.detail } }];
    case 'end_turn':
      requireOpen(state, command.turn_id);
      return [
        {
          type: 'TurnEnded',
          data: { turn_id: command.turn_id, status: command.status, model_calls: command.model_calls, ...(command.seen_version !== undefined && { seen_version: command.seen_version }) },
        },
      ];
    case 'record_model_call':
      requireOpen(state, command.call.turn_id);
      return [{ type: 'ModelCallRecorded', data: command.call }];
    default: {
      const unhandled: never = command;
      throw new Error(`decideTurn: unhandled command ${JSON.stringify(unhandled)}`);
    }
  }
}

function requireOpen(state: SessionState, turnId: string): void {
  if (state.openTurn?.turnId !== turnId) throw new RuleViolation('turn_not_running', `Turn ${turnId} is not the running turn of this session.`);
}
