// The blocker rules: recorded facts name the cause before any wording does, specific phrases beat
// generic ones, and a session nothing explains gets no blocker rather than a guess.
import { describe, expect, it } from 'vitest';
import { type Blocker, type BlockerFacts, deriveBlocker } from '../../src/domain/session/blocker.ts';

const partial: BlockerFacts = {
  outcome: 'partial',
  approvalsPendingAtEnd: 0,
  approvalsExpired: 0,
  approvalsDenied: 0,
  executionsRefused: 0,
  executionsTimedOut: 0,
  lastTurnFailure: null,
  lastAssistantText: null,
  summary: null,
};

type Row = [name: string, facts: Partial<BlockerFacts>, expected: null | [Blocker, 'event' | 'text' | 'summary', string]];

const rows: Row[] = [
  // success is never blocked, whatever happened on the way
  ['success with an expired approval', { outcome: 'success', approvalsExpired: 2, lastAssistantText: 'queued for approval' }, null],
  ['success with refusal text', { outcome: 'success', lastAssistantText: "I can't help with that" }, null],

  // facts
  ['approval still pending at completion', { approvalsPendingAtEnd: 1 }, ['approval_timeout', 'event', '1 approval still pending at completion']],
  ['approvals expired', { approvalsExpired: 2 }, ['approval_timeout', 'event', '2 approvals expired']],
  ['pending and expired together', { approvalsPendingAtEnd: 2, approvalsExpired: 1 }, ['approval_timeout', 'event', '2 approvals still pending at completion, 1 approval expired']],
  ['approval denied', { approvalsDenied: 1 }, ['approval_denied', 'event', '1 approval denied']],
  ['expiry beats denial', { approvalsDenied: 1, approvalsExpired: 1 }, ['approval_timeout', 'event', '1 approval expired']],
  ['execution refused by the retry cap', { executionsRefused: 3 }, ['tool_error', 'event', '3 executions refused by the retry cap']],
  ['execution timed out', { executionsTimedOut: 1 }, ['tool_error', 'event', '1 execution timed out']],
  ['denial beats executions', { approvalsDenied: 1, executionsTimedOut: 4 }, ['approval_denied', 'event', '1 approval denied']],
  ['last turn: empty response', { lastTurnFailure: 'model_empty_response' }, ['model_empty_response', 'event', 'last turn failed: model_empty_response']],
  ['last turn: refusal', { outcome: 'failed', lastTurnFailure: 'model_refusal' }, ['model_refusal', 'event', 'last turn failed: model_refusal']],
  ['executions beat turn failure', { executionsRefused: 1, lastTurnFailure: 'model_refusal' }, ['tool_error', 'event', '1 execution refused by the retry cap']],
  ['facts beat text', { approvalsDenied: 1, lastAssistantText: 'The user moved on.' }, ['approval_denied', 'event', '1 approval denied']],
  // a provider error is not a cause the rules name: the words decide
  ['provider error falls through to text', { lastTurnFailure: 'provider_error', lastAssistantText: 'The command timed out.' }, ['tool_error', 'text', 'timed out']],

  // the summary speaks when the last message names no cause; the last message speaks first
  ['summary names the cause', { lastAssistantText: 'The timer is fine; the container runs out of memory.', summary: 'memory change queued for approval' }, ['approval_timeout', 'summary', 'queued for approval']],
  ['last message beats summary', { lastAssistantText: 'The user moved on.', summary: 'queued for approval' }, ['user_abandoned', 'text', 'user moved on']],
  ['summary without a known cause', { summary: 'partly done' }, null],
  ['facts beat summary', { approvalsDenied: 1, summary: 'classifier flagged it' }, ['approval_denied', 'event', '1 approval denied']],

  // text
  ['queued for approval', { lastAssistantText: 'Both commands are queued for approval.' }, ['approval_timeout', 'text', 'queued for approval']],
  ['waiting for approval', { lastAssistantText: "I'm still waiting for your approval on step 2." }, ['approval_timeout', 'text', 'waiting for your approval']],
  ['approval expired beats timed out', { lastAssistantText: 'The approval expired while the command timed out.' }, ['approval_timeout', 'text', 'approval expired']],
  ['the old system\'s "are queued"', { lastAssistantText: 'Both commands are queued.' }, ['approval_timeout', 'text', 'are queued']],
  ['close this session', { lastAssistantText: 'OK — as you asked, I will close this session.' }, ['user_abandoned', 'text', 'close this session']],
  ['user moved on', { lastAssistantText: 'The user moved on before the fix landed.' }, ['user_abandoned', 'text', 'user moved on']],
  ['abandoned', { lastAssistantText: 'Abandoned at the operator\'s request.' }, ['user_abandoned', 'text', 'Abandoned']],
  ['flagged as config_mutation', { lastAssistantText: 'pct exec 132 systemctl status was flagged as config_mutation.' }, ['classifier_overreach', 'text', 'flagged as config_mutation']],
  ['classifier beats approval wording', { lastAssistantText: 'The classifier sent it to approval; it is still waiting for approval.' }, ['classifier_overreach', 'text', 'classifier']],
  ['model refusal', { outcome: 'failed', lastAssistantText: 'I can’t help with that request.' }, ['model_refusal', 'text', 'I can’t help with']],
  ['empty response', { lastAssistantText: 'The model returned an empty response twice.' }, ['model_empty_response', 'text', 'empty response']],
  ['no local knowledge', { lastAssistantText: 'There is no local knowledge about this pool.' }, ['missing_knowledge', 'text', 'no local knowledge']],
  ["couldn't find any knowledge", { lastAssistantText: "I couldn't find any knowledge on the NFS exports." }, ['missing_knowledge', 'text', "couldn't find any knowledge"]],
  ["I can't run", { lastAssistantText: "I can't run commands inside vm:zimaos directly." }, ['missing_capability', 'text', "I can't run"]],
  ['no tool', { lastAssistantText: 'There is no tool to classify a command before running it.' }, ['missing_capability', 'text', 'There is no tool to']],
  ['not supported', { lastAssistantText: 'vm: targets are not supported by run.' }, ['missing_capability', 'text', 'not supported']],
  ['capability beats generic error', { lastAssistantText: 'Error: vm: targets are not supported.' }, ['missing_capability', 'text', 'not supported']],
  ['timed out', { lastAssistantText: 'chown on strong timed out again.' }, ['tool_error', 'text', 'timed out']],
  ['exit code', { lastAssistantText: 'apt upgrade failed with exit code 100.' }, ['tool_error', 'text', 'failed with exit code']],
  ['generic error', { lastAssistantText: 'rclone reported an error on every transfer.' }, ['tool_error', 'text', 'error']],

  // nothing known
  ['no facts, no text', {}, null],
  ['text that names no cause', { lastAssistantText: 'Partially done; the rest needs a maintenance window.' }, null],
  ['"errors" inside another word does not count', { lastAssistantText: 'Terrorsome weather delayed the rest.' }, null],
  ['empty text', { lastAssistantText: '' }, null],
];

describe('deriveBlocker', () => {
  it.each(rows)('%s', (_name, facts, expected) => {
    const derived = deriveBlocker({ ...partial, ...facts });
    expect(derived).toEqual(expected === null ? null : { blocker: expected[0], evidence: { source: expected[1], detail: expected[2] } });
  });

  it('covers every blocker from text and each fact-derived blocker from events', () => {
    const fromText = new Set(rows.flatMap(([, , e]) => (e?.[1] === 'text' ? [e[0]] : [])));
    const fromEvents = new Set(rows.flatMap(([, , e]) => (e?.[1] === 'event' ? [e[0]] : [])));
    expect([...fromText].sort()).toEqual(
      ['approval_timeout', 'classifier_overreach', 'missing_capability', 'missing_knowledge', 'model_empty_response', 'model_refusal', 'tool_error', 'user_abandoned'],
    );
    expect([...fromEvents].sort()).toEqual(['approval_denied', 'approval_timeout', 'model_empty_response', 'model_refusal', 'tool_error']);
  });
});
