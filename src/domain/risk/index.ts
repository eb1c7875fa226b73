// The risk classifier: a pure function from a shell command to its risk class, with the rules that decide it.
export type { JudgedPart, Verdict } from './classify.ts';
export { classify, classifyParts, isKnownLong, judgedParts, judgedPrograms } from './classify.ts';
export { normaliseCommand } from './normalise.ts';
export type { RiskClass } from './risk-class.ts';
export { RISK_CLASSES } from './risk-class.ts';
export type { Rule } from './rule.ts';
export { RULES, RULES_VERSION } from './rules.ts';
export { MAX_COMMAND_BYTES } from './limits.ts';
