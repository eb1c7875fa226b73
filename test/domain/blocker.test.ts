// The blocker rules: recorded facts name the cause before any wording does, a phrase the facts contradict is
// set aside, specific phrases beat generic ones, and a partial or failed session nothing explains is `unknown`
// with evidence saying so — never null.
import { describe, expect, it } from 'vitest';
import { type Blocker, type BlockerEvidence, type BlockerFacts, deriveBlocker } from '../../src/domain/session/blocker.ts';

const partial: BlockerFacts = {
  outcome: 'partial',
  approvalsPendingAtEnd: 0,
  approvalsExpired: 0,
  approvalsDenied: 0,
  approvalsRequested: 0,
  executionsRefused: 0,
  executionsTimedOut: 0,
  executionsFailed: 0,
  executionsLost: 0,
  executionsUnreachable: 0,
  executionsHostKeyRefused: 0,
  lastTurnFailure: null,
  lastAssistantText: null,
  summary: null,
};

type Row = [name: string, facts: Partial<BlockerFacts>, expected: null | [Blocker, BlockerEvidence['source'], string]];

const NOTHING = 'no fact and no phrase in the last message or the summary named a cause';
/** An approval was asked for (and granted): phrases about approvals and the classifier are not contradicted. */
const asked = { approvalsRequested: 1 } as const;
const STORY = 'I stopped after the same command failed three times; the host looks unreachable';

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
  ['executions failed', { executionsFailed: 2 }, ['tool_error', 'event', '2 executions failed']],
  ['execution lost', { executionsLost: 1 }, ['tool_error', 'event', '1 execution lost']],
  ['the retry cap after failures names both counts', { executionsRefused: 1, executionsFailed: 2 }, ['tool_error', 'event', '1 execution refused by the retry cap, 2 executions failed']],
  ['every kind of run that did not succeed', { executionsRefused: 1, executionsTimedOut: 1, executionsFailed: 1, executionsLost: 1 }, ['tool_error', 'event', '1 execution refused by the retry cap, 1 execution timed out, 1 execution failed, 1 execution lost']],
  ['executions refused as unreachable', { executionsUnreachable: 2 }, ['target_unreachable', 'event', '2 executions refused as unreachable']],
  ['execution refused for a host key mismatch', { executionsHostKeyRefused: 1 }, ['target_unreachable', 'event', '1 execution refused for a host key mismatch']],
  ['unreachable beats the runs that followed', { executionsUnreachable: 1, executionsTimedOut: 1 }, ['target_unreachable', 'event', '1 execution refused as unreachable, 1 execution timed out']],
  ['the storm story: unreachable runs stopped by the cap', { outcome: 'partial', executionsUnreachable: 2, executionsRefused: 1, lastAssistantText: STORY }, ['target_unreachable', 'event', '2 executions refused as unreachable, 1 execution refused by the retry cap']],
  ['denial beats unreachable', { approvalsDenied: 1, executionsUnreachable: 3 }, ['approval_denied', 'event', '1 approval denied']],
  ['a failed run beats the words', { executionsFailed: 1, lastAssistantText: "I can't run commands inside vm:zimaos directly." }, ['tool_error', 'event', '1 execution failed']],
  ['denial beats executions', { approvalsDenied: 1, executionsTimedOut: 4 }, ['approval_denied', 'event', '1 approval denied']],
  ['last turn: empty response', { lastTurnFailure: 'model_empty_response' }, ['model_empty_response', 'event', 'last turn failed: model_empty_response']],
  ['last turn: refusal', { outcome: 'failed', lastTurnFailure: 'model_refusal' }, ['model_refusal', 'event', 'last turn failed: model_refusal']],
  ['executions beat turn failure', { executionsRefused: 1, lastTurnFailure: 'model_refusal' }, ['tool_error', 'event', '1 execution refused by the retry cap']],
  ['facts beat text', { approvalsDenied: 1, lastAssistantText: 'The user moved on.' }, ['approval_denied', 'event', '1 approval denied']],
  // a provider error is not a cause the rules name: the words decide
  ['provider error falls through to text', { lastTurnFailure: 'provider_error', lastAssistantText: 'The command timed out.' }, ['tool_error', 'text', 'timed out']],

  // the summary speaks when the last message names no cause; the last message speaks first
  ['summary names the cause', { ...asked, lastAssistantText: 'The timer is fine; the container runs out of memory.', summary: 'memory change queued for approval' }, ['approval_timeout', 'summary', 'queued for approval']],
  ['last message beats summary', { lastAssistantText: 'The user moved on.', summary: 'queued for approval' }, ['user_abandoned', 'text', 'user moved on']],
  ['summary without a known cause', { summary: 'partly done' }, ['unknown', 'none', NOTHING]],
  ['facts beat summary', { approvalsDenied: 1, summary: 'classifier flagged it' }, ['approval_denied', 'event', '1 approval denied']],

  // text
  ['queued for approval', { ...asked, lastAssistantText: 'Both commands are queued for approval.' }, ['approval_timeout', 'text', 'queued for approval']],
  ['waiting for approval', { ...asked, lastAssistantText: "I'm still waiting for your approval on step 2." }, ['approval_timeout', 'text', 'waiting for your approval']],
  ['approval expired beats timed out', { ...asked, lastAssistantText: 'The approval expired while the command timed out.' }, ['approval_timeout', 'text', 'approval expired']],
  ['the old system\'s "are queued"', { ...asked, lastAssistantText: 'Both commands are queued.' }, ['approval_timeout', 'text', 'are queued']],
  ['close this session', { lastAssistantText: 'OK — as you asked, I will close this session.' }, ['user_abandoned', 'text', 'close this session']],
  ['user moved on', { lastAssistantText: 'The user moved on before the fix landed.' }, ['user_abandoned', 'text', 'user moved on']],
  ['abandoned', { lastAssistantText: 'Abandoned at the operator\'s request.' }, ['user_abandoned', 'text', 'Abandoned']],
  ['flagged as config_mutation', { ...asked, lastAssistantText: 'pct exec 132 systemctl status was flagged as config_mutation.' }, ['classifier_overreach', 'text', 'flagged as config_mutation']],
  ['classifier beats approval wording', { ...asked, lastAssistantText: 'The classifier sent it to approval; it is still waiting for approval.' }, ['classifier_overreach', 'text', 'classifier']],
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
  ['the storm story in words alone', { lastAssistantText: STORY }, ['target_unreachable', 'text', 'unreachable']],
  ['connection refused', { lastAssistantText: 'ssh: connect to host 10.0.0.7 port 22: Connection refused' }, ['target_unreachable', 'text', 'Connection refused']],
  ['could not reach', { lastAssistantText: "I couldn't reach host:hubris." }, ['target_unreachable', 'text', "couldn't reach"]],

  // facts beat text: a phrase the facts contradict is set aside, and the next rule or the next source speaks
  ['the README example: "queued for approval" with no approval requested', { lastAssistantText: 'The timer is fine; the container runs out of memory.', summary: 'diagnosed OOM; memory change queued for approval' }, ['unknown', 'none', `${NOTHING}; set aside: 'queued for approval' (summary: no approval was requested)`]],
  ['an approval phrase set aside, the next rule speaks', { lastAssistantText: 'It is queued for approval; the last run timed out.' }, ['tool_error', 'text', 'timed out']],
  ['an approval phrase set aside, the summary speaks', { lastAssistantText: 'Still waiting for approval.', summary: 'the operator moved on' }, ['user_abandoned', 'summary', 'operator moved on']],
  ['a classifier phrase with no approval requested', { lastAssistantText: 'The classifier flagged it as config_mutation.' }, ['unknown', 'none', `${NOTHING}; set aside: 'flagged it as config_mutation' (last message: no approval was requested)`]],
  ['a denial phrase with no denial', { ...asked, lastAssistantText: 'The operator denied it.' }, ['unknown', 'none', `${NOTHING}; set aside: 'The operator denied it' (last message: no approval was denied)`]],
  ['phrases set aside in both sources are all named', { lastAssistantText: 'Waiting for approval.', summary: 'queued for approval' }, ['unknown', 'none', `${NOTHING}; set aside: 'Waiting for approval' (last message: no approval was requested), 'queued for approval' (summary: no approval was requested)`]],

  // nothing known
  ['no facts, no text', {}, ['unknown', 'none', NOTHING]],
  ['failed with no facts and no text', { outcome: 'failed' }, ['unknown', 'none', NOTHING]],
  ['text that names no cause', { lastAssistantText: 'Partially done; the rest needs a maintenance window.' }, ['unknown', 'none', NOTHING]],
  ['"errors" inside another word does not count', { lastAssistantText: 'Terrorsome weather delayed the rest.' }, ['unknown', 'none', NOTHING]],
  ['empty text', { lastAssistantText: '' }, ['unknown', 'none', NOTHING]],
  ['a provider error names no cause', { lastTurnFailure: 'provider_error' }, ['unknown', 'none', NOTHING]],
];

describe('deriveBlocker', () => {
  it.each(rows)('%s', (_name, facts, expected) => {
    const derived = deriveBlocker({ ...partial, ...facts });
    expect(derived).toEqual(expected === null ? null : { blocker: expected[0], evidence: { source: expected[1], detail: expected[2] } });
  });

  it('never leaves a partial or failed session without a blocker', () => {
    for (const [, facts] of rows) {
      for (const outcome of ['partial', 'failed'] as const) expect(deriveBlocker({ ...partial, ...facts, outcome })).not.toBeNull();
    }
  });

  it('covers every blocker from text and each fact-derived blocker from events', () => {
    const by = (source: BlockerEvidence['source']) => [...new Set(rows.flatMap(([, , e]) => (e?.[1] === source ? [e[0]] : [])))].sort();
    // approval_denied has phrases, but a denial is always a fact first: from text it can only be set aside.
    expect(by('text')).toEqual(
      ['approval_timeout', 'classifier_overreach', 'missing_capability', 'missing_knowledge', 'model_empty_response', 'model_refusal', 'target_unreachable', 'tool_error', 'user_abandoned'],
    );
    expect(by('event')).toEqual(['approval_denied', 'approval_timeout', 'model_empty_response', 'model_refusal', 'target_unreachable', 'tool_error']);
    expect(by('none')).toEqual(['unknown']);
  });
});
