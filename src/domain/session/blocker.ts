// Why a session ended without success, as one stable code auditors can count: recorded facts first
// (approvals, executions, turn failures), then phrases in the agent's last words, then in its summary, and
// `unknown` when none names a cause, so a partial or failed session always says why (or that nothing did). A phrase
// the facts contradict (an approval timing out where none was requested) is set aside. Versioned, because
// changing a rule changes what the read model says about past sessions.
import type { Outcome, TurnFailureReason } from './events.ts';

// 2: a blocker for every partial or failed session (unknown as the last resort), target_unreachable, failed and
// lost runs as facts, and phrases the facts contradict set aside. 3: a task Nomos closed itself (idle, or its MCP
// session ended) was abandoned.
export const BLOCKER_RULES_VERSION = 3;

export type Blocker =
  | 'approval_timeout'
  | 'approval_denied'
  | 'user_abandoned'
  | 'classifier_overreach'
  | 'model_refusal'
  | 'model_empty_response'
  | 'missing_knowledge'
  | 'missing_capability'
  /**
   * Executions could not reach their target (refused as unreachable, or for a host key that does not match).
   * Not tool_error: nothing ran, and what an auditor does about it (the host, its address, its key) differs.
   */
  | 'target_unreachable'
  | 'tool_error'
  /** Nothing recorded and nothing said names a cause: the evidence says so, rather than a null that hides it. */
  | 'unknown';

/** What the rules read; approval and execution counts are of the current task (since the session last opened). */
export interface BlockerFacts {
  outcome: Outcome;
  /**
   * complete_task came from Nomos itself (a system actor: src/commands/close-abandoned.ts), not from the agent or an
   * operator: nobody finished the task, whatever else the log holds.
   */
  closedByNomos?: boolean;
  approvalsRequested: number;
  /** Approvals still waiting when the task completed (complete_task cancels them as orphaned). */
  approvalsPendingAtEnd: number;
  approvalsExpired: number;
  approvalsDenied: number;
  /** Executions the retry cap refused to issue again. */
  executionsRefused: number;
  executionsTimedOut: number;
  /** Runs that ended failed (lost ones are counted apart). */
  executionsFailed: number;
  /** Runs whose server stopped before they ended, and approved runs no server started in time. */
  executionsLost: number;
  /** Refused as unreachable: the target's SSH could not be reached. */
  executionsUnreachable: number;
  /** Refused because the host's key did not match the pinned one. */
  executionsHostKeyRefused: number;
  lastTurnFailure: TurnFailureReason | null;
  lastAssistantText: string | null;
  /** complete_task's summary: the agent's own account of the outcome, read when its last message names no cause. */
  summary: string | null;
}

export interface BlockerEvidence {
  /** none: the blocker is unknown, because no fact and no phrase in the last message or the summary named a cause. */
  source: 'event' | 'text' | 'summary' | 'none';
  /** The fact ("1 approval expired"), the phrase matched, or (none) what was looked at and any phrase set aside. */
  detail: string;
}

export interface DerivedBlocker {
  blocker: Blocker;
  evidence: BlockerEvidence;
}

/**
 * Phrases, tried in order; the first match the facts do not contradict wins. Specific causes come first: a
 * classifier verdict or an approval queue is often followed by "timed out" or "error", which alone say only that
 * a tool failed.
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
  ['approval_denied', /\bapprovals? (?:was |were )?(?:denied|rejected|refused)\b/i],
  ['approval_denied', /\b(?:the )?(?:operator|you) (?:has |have )?(?:denied|rejected|declined) (?:it|the|my|this|that)\b/i],
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
  ['target_unreachable', /\b(?:unreachable|no route to host|connection refused)\b/i],
  ['target_unreachable', /\bcould(?: not|n['’]?t) (?:connect to|reach)\b/i],
  ['target_unreachable', /\bhost key (?:mismatch|changed|did not match|does not match)\b/i],
  ['tool_error', /\btimed out\b/i],
  ['tool_error', /\bfailed with exit (?:code|status)\b/i],
  ['tool_error', /\bexit (?:code|status) [1-9]\d*\b/i],
  ['tool_error', /\b(?:permission denied|no such file or directory)\b/i],
  ['tool_error', /\berrors?\b/i],
];

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

const executions = (n: number, what: string) => `${count(n, 'execution', 'executions')} ${what}`;

/** The execution facts, each that is not zero, in the order the detail names them. */
function executionParts(facts: BlockerFacts, kinds: ReadonlyArray<'unreached' | 'ran'>): string[] {
  const parts: Array<readonly [number, string, 'unreached' | 'ran']> = [
    [facts.executionsUnreachable, 'refused as unreachable', 'unreached'],
    [facts.executionsHostKeyRefused, 'refused for a host key mismatch', 'unreached'],
    [facts.executionsRefused, 'refused by the retry cap', 'ran'],
    [facts.executionsTimedOut, 'timed out', 'ran'],
    [facts.executionsFailed, 'failed', 'ran'],
    [facts.executionsLost, 'lost', 'ran'],
  ];
  return parts.filter(([n, , kind]) => n > 0 && kinds.includes(kind)).map(([n, what]) => executions(n, what));
}

function fromEvents(facts: BlockerFacts): DerivedBlocker | null {
  const event = (blocker: Blocker, parts: string[]): DerivedBlocker => ({ blocker, evidence: { source: 'event', detail: parts.join(', ') } });
  if (facts.closedByNomos === true) return event('user_abandoned', [`closed by Nomos: ${facts.summary ?? 'nobody finished the task'}`]);
  if (facts.approvalsPendingAtEnd > 0 || facts.approvalsExpired > 0) {
    const parts: string[] = [];
    if (facts.approvalsPendingAtEnd > 0) parts.push(`${count(facts.approvalsPendingAtEnd, 'approval', 'approvals')} still pending at completion`);
    if (facts.approvalsExpired > 0) parts.push(`${count(facts.approvalsExpired, 'approval', 'approvals')} expired`);
    return event('approval_timeout', parts);
  }
  if (facts.approvalsDenied > 0) return event('approval_denied', [`${count(facts.approvalsDenied, 'approval', 'approvals')} denied`]);
  // A target that could not be reached explains the runs that followed (a retry cap after unreachable attempts).
  if (facts.executionsUnreachable > 0 || facts.executionsHostKeyRefused > 0) return event('target_unreachable', executionParts(facts, ['unreached', 'ran']));
  const ran = executionParts(facts, ['ran']);
  if (ran.length > 0) return event('tool_error', ran);
  if (facts.lastTurnFailure === 'model_empty_response' || facts.lastTurnFailure === 'model_refusal') {
    return event(facts.lastTurnFailure, [`last turn failed: ${facts.lastTurnFailure}`]);
  }
  return null;
}

/** Why the facts rule a phrase's blocker out, or null when they do not. */
function contradiction(blocker: Blocker, facts: BlockerFacts): string | null {
  switch (blocker) {
    case 'approval_timeout':
      return facts.approvalsRequested === 0 ? 'no approval was requested' : null;
    case 'approval_denied':
      return facts.approvalsDenied === 0 ? 'no approval was denied' : null;
    case 'classifier_overreach':
      // The classifier's verdict only ever stands in the way as an approval to wait for.
      return facts.approvalsRequested === 0 ? 'no approval was requested' : null;
    case 'user_abandoned':
    case 'model_refusal':
    case 'model_empty_response':
    case 'missing_knowledge':
    case 'missing_capability':
    case 'target_unreachable':
    case 'tool_error':
    case 'unknown':
      return null;
    default: {
      const unhandled: never = blocker;
      throw new Error(`contradiction: unhandled blocker ${String(unhandled)}`);
    }
  }
}

function fromText(text: string | null, source: 'text' | 'summary', facts: BlockerFacts, setAside: string[]): DerivedBlocker | null {
  if (text === null) return null;
  // A blocker the facts rule out is noted once, at its first phrase: its other phrases are ruled out alike.
  const ruledOut = new Set<Blocker>();
  for (const [blocker, pattern] of TEXT_RULES) {
    if (ruledOut.has(blocker)) continue;
    const match = pattern.exec(text);
    if (!match) continue;
    const against = contradiction(blocker, facts);
    if (against === null) return { blocker, evidence: { source, detail: match[0] } };
    ruledOut.add(blocker);
    setAside.push(`'${match[0]}' (${source === 'text' ? 'last message' : 'summary'}: ${against})`);
  }
  return null;
}

/** Null for a success only: a partial or failed session always gets a blocker, unknown as the last resort. */
export function deriveBlocker(facts: BlockerFacts): DerivedBlocker | null {
  if (facts.outcome === 'success') return null;
  const setAside: string[] = [];
  const derived = fromEvents(facts) ?? fromText(facts.lastAssistantText, 'text', facts, setAside) ?? fromText(facts.summary, 'summary', facts, setAside);
  if (derived !== null) return derived;
  const detail = 'no fact and no phrase in the last message or the summary named a cause';
  return { blocker: 'unknown', evidence: { source: 'none', detail: setAside.length === 0 ? detail : `${detail}; set aside: ${setAside.join(', ')}` } };
}
