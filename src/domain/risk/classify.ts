// The classifier: parses a command, unwraps wrappers, judges every simple command it would run and returns the most
// severe verdict. Unknown input is a config_mutation, never reversible_low; unparseable input, and code that cannot be
// seen before it runs (a piped script, a name known only at run time, another language's program) is destructive.
import type { Invocation } from './args.ts';
import { invocation } from './args.ts';
import { isLongRunning } from './long.ts';
import type { Redirect } from './parse.ts';
import { parseShell } from './parse.ts';
import { truncatesFile } from './redirects.ts';
import type { RiskClass } from './risk-class.ts';
import { severity } from './risk-class.ts';
import type { Rule } from './rule.ts';
import {
  ASSIGNMENT_RULE, assignmentFinding, EMPTY_FILE_RULE, EMPTY_RULE, OPAQUE_CODE_RULE, OPAQUE_RULE, REDIRECT_RULE, RULES_AFTER_WRAPPERS,
  REDIRECT_TARGET_RULES, RULES_BEFORE_WRAPPERS, TOO_COMPLEX_RULE, TOO_DEEP_RULE, UNKNOWN_RULE, UNPARSEABLE_RULE, WRAPPER_OPTION_RULE,
} from './rules.ts';
import { BUILTIN_RULE, CONSTRUCT_RULES, lookupAssigned } from './rules-dialect.ts';
import { unwrap } from './unwrap.ts';

export interface Verdict {
  risk_class: RiskClass;
  /** "<command part>: <why>", naming the part that decided. */
  reason: string;
  /** Id of the rule that decided (the most severe part's). */
  rule: string;
  /** The simple commands classified after unwrapping, normalised. */
  inner_commands: string[];
}

interface Finding {
  readonly rule: Rule;
  readonly part: string;
  readonly why?: string;
  /** The simple command judged, when the finding is on one rather than on a redirection, an assignment or the syntax. */
  readonly command?: Invocation;
}

interface Walk {
  readonly findings: Finding[];
  /** Every simple command met, wrappers included. */
  readonly visited: Invocation[];
  /** Wrappers met with an option the classifier does not know (each followed both ways). */
  doubts: number;
}

// Deep enough for any real nesting (ssh → pct exec → sudo → timeout → bash -c …), shallow enough to stop a runaway.
const MAX_DEPTH = 16;

// A wrapper given an option the classifier does not know is followed both ways, so nested ones multiply: a bound on
// how many such wrappers one command may hold.
const MAX_DOUBTS = 8;

const firstMatch = (rules: readonly Rule[], inv: Invocation): Rule | undefined => rules.find((rule) => rule.match?.(inv));

function redirectText(redirects: readonly Redirect[]): string {
  return redirects.map((r) => `${r.fd ?? ''}${r.op} ${r.target.text}`).join(' ');
}

/** A rule's finding on a command, with what in the command decided when the rule says. */
function finding(rule: Rule, inv: Invocation): Finding {
  const detail = rule.detail?.(inv);
  return detail === undefined ? { rule, part: inv.text } : { rule, part: inv.text, why: `${rule.reason}: ${detail}` };
}

/** A part of a reason stays readable however long the command. */
const shorten = (text: string): string => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

function walkScript(source: string, depth: number, walk: Walk): void {
  const parsed = parseShell(source);
  if (!parsed.ok) {
    const rule = parsed.tooComplex === true ? TOO_COMPLEX_RULE : UNPARSEABLE_RULE;
    walk.findings.push({ rule, part: shorten(source.trim()), why: `${rule.reason} (${parsed.error})` });
    return;
  }
  for (const command of parsed.commands) {
    const inv = invocation(command.argv, command.redirects);
    if (REDIRECT_RULE.match?.(inv)) {
      // A redirection into a disk or a network socket is more than a file written.
      const alone = invocation([], command.redirects);
      const rule = REDIRECT_TARGET_RULES.find((r) => r.match?.(alone)) ?? REDIRECT_RULE;
      walk.findings.push({ ...finding(rule, alone), part: `${inv.text} ${redirectText(inv.redirects)}`.trim() });
    }
    if (command.argv.length === 0) {
      const assigned = lookupAssigned(command.assigns);
      const part = command.assigns.map((w) => w.text).join(' ');
      if (assigned !== undefined) walk.findings.push({ rule: BUILTIN_RULE, part, why: `${BUILTIN_RULE.reason}: it sets ${assigned}, which changes what later names run` });
      else if (command.assigns.length > 0) walk.findings.push({ rule: ASSIGNMENT_RULE, part });
      // `> file` with no command empties the file; a compound command's redirection gets the output of its parts.
      if (!command.compound && inv.redirects.some(truncatesFile)) walk.findings.push({ rule: EMPTY_FILE_RULE, part: redirectText(inv.redirects) });
      continue;
    }
    walkCommand(inv, depth, walk);
    // The assignments in front (`LD_PRELOAD=… ls`) change what the command does; judged after it, so that on a tie
    // the command's own reason stays.
    const assigned = assignmentFinding(command.assigns);
    if (assigned !== undefined) walk.findings.push({ rule: assigned.rule, part: `${command.assigns.map((w) => w.text).join(' ')} ${inv.text}`, why: assigned.why });
  }
  // After the commands, so that on a tie a rule naming what a command does is the reason given.
  for (const hazard of parsed.hazards) walk.findings.push({ rule: CONSTRUCT_RULES[hazard.construct], part: shorten(hazard.text) });
}

function walkCommand(inv: Invocation, depth: number, walk: Walk): void {
  if (depth > MAX_DEPTH) {
    walk.findings.push({ rule: TOO_DEEP_RULE, part: inv.text });
    return;
  }
  walk.visited.push(inv);
  if (inv.name === undefined) {
    walk.findings.push({ rule: OPAQUE_CODE_RULE, part: inv.text, why: `${OPAQUE_CODE_RULE.reason}: the command name is only known at run time`, command: inv });
    return;
  }
  const own = firstMatch(RULES_BEFORE_WRAPPERS, inv);
  const payloads = unwrap(inv);
  if (payloads?.some((p) => p.kind === 'unknown' && p.option === true) === true && ++walk.doubts > MAX_DOUBTS) {
    walk.findings.push({ rule: TOO_COMPLEX_RULE, part: shorten(inv.text), why: `${TOO_COMPLEX_RULE.reason}: too many wrapper options the classifier does not know`, command: inv });
    return;
  }
  if (payloads === undefined) {
    walk.findings.push({ ...finding(own ?? firstMatch(RULES_AFTER_WRAPPERS, inv) ?? UNKNOWN_RULE, inv), command: inv });
    return;
  }
  // A wrapper is transparent unless it does something of its own (find -exec, strace -o, …).
  if (own !== undefined && severity(own.class) > severity('reversible_low')) {
    walk.findings.push({ ...finding(own, inv), command: inv });
  }
  for (const payload of payloads) {
    switch (payload.kind) {
      case 'argv':
        // The redirections stay with the command that reads them (`sudo bash <<'EOF'`); they were judged above.
        walkCommand(invocation(payload.argv, inv.redirects), depth + 1, walk);
        break;
      case 'script':
        if (depth + 1 > MAX_DEPTH) walk.findings.push({ rule: TOO_DEEP_RULE, part: inv.text });
        else walkScript(payload.source, depth + 1, walk);
        break;
      case 'unknown': {
        const rule = payload.code === true ? OPAQUE_CODE_RULE : payload.option === true ? WRAPPER_OPTION_RULE : OPAQUE_RULE;
        walk.findings.push({ rule, part: inv.text, why: `${rule.reason}: ${payload.why}`, command: inv });
        break;
      }
      default: {
        const never: never = payload;
        throw new Error(`unhandled payload ${JSON.stringify(never)}`);
      }
    }
  }
}

function walkAll(command: string): Walk {
  const walk: Walk = { findings: [], visited: [], doubts: 0 };
  walkScript(command, 0, walk);
  return walk;
}

/** The verdict on a shell command: its most severe part decides (the first such part on a tie). */
export function classify(command: string): Verdict {
  return verdictOf(walkAll(command));
}

function verdictOf(walk: ReturnType<typeof walkAll>): Verdict {
  let decisive: Finding | undefined;
  for (const finding of walk.findings) {
    if (decisive === undefined || severity(finding.rule.class) > severity(decisive.rule.class)) decisive = finding;
  }
  if (decisive === undefined) {
    return { risk_class: EMPTY_RULE.class, reason: `empty command: ${EMPTY_RULE.reason}`, rule: EMPTY_RULE.id, inner_commands: [] };
  }
  return {
    risk_class: decisive.rule.class,
    reason: `${decisive.part}: ${decisive.why ?? decisive.rule.reason}`,
    rule: decisive.rule.id,
    inner_commands: walk.findings.flatMap((f) => (f.command === undefined ? [] : [f.command.text])),
  };
}

/** A part of a command as the classifier judged it: one of the findings its verdict is the most severe of. */
export interface JudgedPart {
  /**
   * The simple command's words as the shell passes them (quotes removed), a word only known at run time as null;
   * null when the part is no simple command (a redirection, assignments, a construct, text that does not parse).
   */
  readonly argv: readonly (string | null)[] | null;
  /** The part as the verdict's reason names it. */
  readonly text: string;
  /** The rule that judged the part, and its class. */
  readonly rule: string;
  readonly risk_class: RiskClass;
}

/**
 * Every part of the command the classifier judged, in the order met, from the same walk as `classify`: the verdict
 * is the most severe of them, so a reader of the parts (the policy's matcher) sees exactly what was judged.
 */
export function judgedParts(command: string): JudgedPart[] {
  return partsOf(walkAll(command));
}

/** The verdict and the judged parts from one walk of the command (the policy needs both). */
export function classifyParts(command: string): { verdict: Verdict; parts: JudgedPart[] } {
  const walk = walkAll(command);
  return { verdict: verdictOf(walk), parts: partsOf(walk) };
}

function partsOf(walk: ReturnType<typeof walkAll>): JudgedPart[] {
  return walk.findings.map(({ rule, part, command: inv }) => ({
    argv: inv === undefined ? null : [inv.path ?? null, ...inv.args.map((w) => w.value ?? null)],
    text: part,
    rule: rule.id,
    risk_class: rule.class,
  }));
}

/**
 * The names of the programs the classifier judged, wrappers included (`sudo timeout 5 ls` → sudo, timeout, ls), in
 * the order met: whatever a shell running the command executes must be one of these.
 */
export function judgedPrograms(command: string): string[] {
  return walkAll(command).visited.flatMap((inv) => (inv.name === undefined ? [] : [inv.name]));
}

/** True when the command (after unwrapping) includes one known to run long: upgrades, migrations, syncs, dd, zfs send/recv. */
export function isKnownLong(command: string): boolean {
  return walkAll(command).visited.some(isLongRunning);
}
