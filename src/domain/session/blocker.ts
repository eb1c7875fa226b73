// Why a session ended without success, as one stable code auditors can count: recorded facts first
// (approvals, executions, turn failures), then phrases in the agent's last words, then in its summary. Versioned, because
// changing a rule changes what the read model says about past sessions.
import type { Outcome, TurnFailureReason } from './events.ts';

export const BLOCKER_RULES_VERSION = 1;

export type Blocker =
  | 'approval_timeout'
  | 'approval_denied'
  | 'user_abandoned'
  | 'classifier_overreach'
  | 'model_refusal'
  | 'model_empty_response'
  | 'missing_knowledge'
  | 'missing_capability'
  | 'tool_error';

export interface BlockerFacts {
  outcome: Outcome;
  /** Approvals still waiting when the task completed (complete_task cancels them as orphaned). */
  approvalsPendingAtEnd: number;
  approvalsExpired: number;
  approvalsDenied: number;
  /** Executions the retry cap refused to issue again. */
  executionsRefused: number;
  executionsTimedOut: number;
  lastTurnFailure: TurnFailureReason | null;
  lastAssistantText: string | null;
  /** complete_task's summary: the agent's own account of the outcome, read when its last message names no cause. */
  summary: string | null;
}

export interface BlockerEvidence {
  source: 'event' | 'text' | 'summary';
  /** The fact ("1 approval expired") or the phrase matched in the last assistant message or the summary. */
  detail: string;
}

export interface DerivedBlocker {
  blocker: Blocker;
  evidence: BlockerEvidence;
}

/**
 * Phrases, tried in order; the first match wins. Specific causes come first: a classifier verdict or an
 * approval queue is often followed by "timed out" or "error", which alone say only that a tool failed.
 */
const TEXT_RULES: ReadonlyArray<readonly [Blocker, RegExp]> = [
  ['classifier_overreach', /flagged (?:it |them )?(?:as )?(?:a )?config_mutation/i],
  ['classifier_overreach', /\bconfig_mutation\b/i],
  ['classifier_overreach', /\b(?:risk |preflight )?classifier\b/i],
  ['classifier_overreach', /\b(?:mis)?classified (?:it |them )?as\b/i],
  ['approval_timeout', /\bqueued for approval\b/i],
  ['approval_timeout', /\b(?:waiting|awaiting|pending) (?:for )?(?:your |the operator'?s |operator |an? )?approval\b/i],
  ['approval_timeout', /\bapprovals? (?:window )?(?:has |have )?(?:expired|timed out|lapsed)\b/i],
  ['approval_timeout', /\bassent window\b/i],
  ['approval_timeout', /\b(?:is|are|was|were) (?:still )?queued\b/i],
  ['user_abandoned', /\bclos(?:e|ing) (?:this|the) session\b/i],
  ['user_abandoned', /\b(?:user|operator|you) (?:has |have )?moved on\b/i],
  ['user_abandoned', /\babandon(?:ed|ing|s)?\b/i],
  ['model_refusal', /\bI (?:can(?:no|['’])?t|won['’]?t|will not|am unable to|['’]m unable to) (?:help|assist) with\b/i],
  ['model_refusal', /\bI must decline\b/i],
  ['model_refusal', /\b(?:the )?model refused\b/i],
  ['model_empty_response', /\bempty (?:model )?(?:response|reply|answer)\b/i],
  ['model_empty_response', /\b(?:the )?model (?:returned|gave) (?:nothing|no (?:text|content|answer))\b/i],
  ['missing_knowledge', /\bno (?:local )?knowledge\b/i],
  ['missing_knowledge', /\bcouldn['’]?t find any (?:knowledge|documentation|runbook|notes)\b/i],
  ['missing_knowledge', /\b(?:don['’]?t|do not) (?:have|know) (?:any )?(?:information|knowledge|documentation)\b/i],
  ['missing_capability', /\bI (?:can(?:no|['’])?t|am unable to|['’]m unable to) run\b/i],
  ['missing_capability', /\b(?:there is |there['’]s )?no tool (?:for|to|that|which)\b/i],
  ['missing_capability', /\b(?:don['’]?t|do not) have (?:a|any) tool\b/i],
  ['missing_capability', /\bnot (?:yet )?supported\b/i],
  ['missing_capability', /\bnot (?:directly )?runnable\b/i],
  ['tool_error', /\btimed out\b/i],
  ['tool_error', /\bfailed with exit (?:code|status)\b/i],
  ['tool_error', /\bexit (?:code|status) [1-9]\d*\b/i],
  ['tool_error', /\b(?:connection refused|permission denied|no such file or directory)\b/i],
  ['tool_error', /\berrors?\b/i],
];

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function fromEvents(facts: BlockerFacts): DerivedBlocker | null {
  const event = (blocker: Blocker, parts: string[]): DerivedBlocker => ({ blocker, evidence: { source: 'event', detail: parts.join(', ') } });
  if (facts.approvalsPendingAtEnd > 0 || facts.approvalsExpired > 0) {
    const parts: string[] = [];
    if (facts.approvalsPendingAtEnd > 0) parts.push(`${count(facts.approvalsPendingAtEnd, 'approval', 'approvals')} still pending at completion`);
    if (facts.approvalsExpired > 0) parts.push(`${count(facts.approvalsExpired, 'approval', 'approvals')} expired`);
    return event('approval_timeout', parts);
  }
  if (facts.approvalsDenied > 0) return event('approval_denied', [`${count(facts.approvalsDenied, 'approval', 'approvals')} denied`]);
  if (facts.executionsRefused > 0 || facts.executionsTimedOut > 0) {
    const parts: string[] = [];
    if (facts.executionsRefused > 0) parts.push(`${count(facts.executionsRefused, 'execution', 'executions')} refused by the retry cap`);
    if (facts.executionsTimedOut > 0) parts.push(`${count(facts.executionsTimedOut, 'execution', 'executions')} timed out`);
    return event('tool_error', parts);
  }
  if (facts.lastTurnFailure === 'model_empty_response' || facts.lastTurnFailure === 'model_refusal') {
    return event(facts.lastTurnFailure, [`last turn failed: ${facts.lastTurnFailure}`]);
  }
  return null;
}

function fromText(text: string | null, source: 'text' | 'summary'): DerivedBlocker | null {
  if (text === null) return null;
  for (const [blocker, pattern] of TEXT_RULES) {
    const match = pattern.exec(text);
    if (match) return { blocker, evidence: { source, detail: match[0] } };
  }
  return null;
}

/** Null for a success, and for a session whose facts and words name no known cause: unknown is honest. */
export function deriveBlocker(facts: BlockerFacts): DerivedBlocker | null {
  if (facts.outcome === 'success') return null;
  return fromEvents(facts) ?? fromText(facts.lastAssistantText, 'text') ?? fromText(facts.summary, 'summary');
}
