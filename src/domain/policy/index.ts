// The policy lab's pure core: an operator's rules over commands (allow, ask, deny), loaded with their examples
// proven, and the decision they give on a command beside the classifier's verdict, above a floor kept in code.
export type { PolicyDecision } from './decide.ts';
export { classifierDecision, decide } from './decide.ts';
export type { Decision, MatchWord } from './document.ts';
export { DECISIONS, MAX_ALTERNATIVES, MAX_EXAMPLES, MAX_MATCH_WORDS, MAX_RULES, MAX_TARGETS, MAX_TEXT, Policy, PolicyRule, PolicyRuleId, policyCanonicalJson } from './document.ts';
export { belowFloor, FLOOR_RULES } from './floor.ts';
export type { LoadedPolicy, PolicyProblem } from './load.ts';
export { loadPolicy } from './load.ts';
export { ruleMatches } from './match.ts';
export { coversTarget, EVERY_TARGET, targetMatches } from './targets.ts';
export type { JudgeRequest, Judgement } from './judge.ts';
export { judge, unjudged } from './judge.ts';
export { CHANGES, type Change, type CommandJudgement, type ExecutionDetail, type ExecutionRef, FLAGS, type Flag, type PolicyThen, type ReplayGroup, WHAT_IF_FLAGGED, WHAT_IF_SAMPLES, type WhatIfPlan, type WhatIfResult, type WhatIfSample, changeOf, pickedIds, planWhatIf, whatIfResult } from './what-if.ts';
export { DEFAULT_MIN_APPROVALS, type DecidedApproval, type Suggestion, type SuggestionEvidence, suggestRules } from './suggest.ts';
