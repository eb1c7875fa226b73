// Every rule in the order the classifier tries them: the first whose matcher accepts a simple command decides it.
// Destructive rules go first so that no allowlist entry can shadow them; the test suite proves each rule's examples.
import { named } from './args.ts';
import { writesFile } from './redirects.ts';
import { DESTRUCTIVE_RULES } from './rules-destructive.ts';
import { CONSTRUCT_ONLY_RULES, DIALECT_RULES } from './rules-dialect.ts';
import { EMPTY_FILE_RULE } from './rules-empty-file.ts';
import { FIREWALL_DESTRUCTIVE_RULE } from './rules-firewall.ts';
import { EXFILTRATION_RULE, EXPOSURE_RULES } from './rules-exposure.ts';
import { DEVICE_WRITE_RULE, HOST_RULES } from './rules-host.ts';
import { CHANGE_RULES, MUTATION_RULES } from './rules-mutation.ts';
import { OPAQUE_CODE_RULE } from './rules-opaque.ts';
import { READ_RULES } from './rules-read.ts';
import type { Rule } from './rule.ts';

export { EMPTY_FILE_RULE } from './rules-empty-file.ts';
export { OPAQUE_CODE_RULE } from './rules-opaque.ts';
export { assignmentFinding } from './rules-exposure.ts';

/** Bump whenever a rule changes: approvals hash it in, so a changed rule set never reuses an old approval. */
export const RULES_VERSION = 6;

export const REDIRECT_RULE: Rule = {
  id: 'redirect-write',
  class: 'config_mutation',
  reason: 'redirects output into a file',
  examples: ['echo hi > /etc/motd', 'cat a >> /etc/fstab', 'ls &> /tmp/out', 'grep x f >| out', 'echo x >&/tmp/f', '{ ls; } > /tmp/l'],
  match: (inv) => inv.redirects.some(writesFile),
};

const SHELL_BUILTIN_RULE: Rule = {
  id: 'shell-builtin',
  class: 'reversible_low',
  reason: "only changes the shell's own state",
  examples: ['cd /tmp && ls', 'exec 2>&1', 'export LANG=C.UTF-8', 'set -euo pipefail; ls', '[[ -f /etc/exports ]] && cat /etc/exports', 'local x=1'],
  match: named('cd', 'command', 'exec', 'export', 'declare', 'local', 'readonly', 'typeset', 'set', 'shopt', 'unset', '[[', 'wait', 'read', 'exit', 'return', 'break', 'continue', 'pushd', 'popd', 'umask'),
};

/** Rules that judge a redirection's target before it counts as a plain file written (REDIRECT_RULE). */
export const REDIRECT_TARGET_RULES: readonly Rule[] = [DEVICE_WRITE_RULE, EXFILTRATION_RULE];

/** Outcomes the walk decides itself, without a matcher. */
export const EMPTY_RULE: Rule = {
  id: 'empty-command',
  class: 'reversible_low',
  reason: 'nothing runs',
  examples: ['', '   ', '# only a comment'],
};

export const ASSIGNMENT_RULE: Rule = {
  id: 'shell-assignment',
  class: 'reversible_low',
  reason: 'only sets shell variables',
  examples: ['X=1', 'A=1 B=2'],
};

export const UNPARSEABLE_RULE: Rule = {
  id: 'unparseable',
  // Destructive, not config_mutation: what bash's grammar rejects, dash may still run in part (`((cat f))` is two
  // subshells running `cat f` there), and an assent window would run it without asking.
  class: 'destructive',
  reason: 'the shell parser rejects it, so what it does is unknown (the shell that runs it may still run parts of it)',
  examples: ["echo 'unterminated", 'ls &&', 'if true; then', '((cat f))'],
};

export const UNKNOWN_RULE: Rule = {
  id: 'unknown-command',
  class: 'config_mutation',
  reason: 'not a command the classifier knows to be read-only',
  examples: ['frobnicate --all', 'pct exec 132 -- backup-now', 'python3 -m http.server', 'top'],
};

export const OPAQUE_RULE: Rule = {
  id: 'opaque-wrapper',
  class: 'config_mutation',
  reason: 'it wraps no command that can be followed',
  examples: ['ssh -N -L 8080:localhost:80 host', 'sudo -e /etc/hosts', 'sudo -v', 'timeout 5', "bash -c"],
};

export const WRAPPER_OPTION_RULE: Rule = {
  id: 'wrapper-option',
  class: 'config_mutation',
  reason: 'a wrapper is given an option the classifier does not know, so which word it runs is in doubt',
  examples: ['timeout --frobnicate 5 ls', 'nice --bogus ls', 'flock -Z /tmp/lock ls', 'ip -force netns exec blue ls'],
};

export const TOO_DEEP_RULE: Rule = {
  id: 'nesting-too-deep',
  class: 'destructive',
  reason: 'wrappers are nested too deeply to follow',
  examples: [`${'sudo '.repeat(40)}ls`],
};

export const TOO_COMPLEX_RULE: Rule = {
  id: 'too-complex',
  class: 'destructive',
  reason: 'too complex to classify: what it runs is not known',
  examples: [`${'('.repeat(65)}ls${')'.repeat(65)}`, `echo ${'$('.repeat(65)}ls${')'.repeat(65)}`, `${'ls | '.repeat(400)}ls`],
};

/**
 * Matchers tried in order on each simple command. When none of these matches a wrapper (pct exec, sudo, …), the
 * wrapper is transparent and what it runs is classified instead; otherwise the wrapper's own verdict counts too.
 */
export const RULES_BEFORE_WRAPPERS: readonly Rule[] = [
  ...DIALECT_RULES,
  OPAQUE_CODE_RULE,
  ...DESTRUCTIVE_RULES,
  ...HOST_RULES,
  EMPTY_FILE_RULE,
  FIREWALL_DESTRUCTIVE_RULE,
  ...EXPOSURE_RULES,
  ...MUTATION_RULES,
  ...READ_RULES,
  SHELL_BUILTIN_RULE,
];

/** Tried when a command is no wrapper and nothing above matched; UNKNOWN_RULE decides when none of these matches. */
export const RULES_AFTER_WRAPPERS: readonly Rule[] = CHANGE_RULES;

/** Every rule, for listing and for the test that proves each rule's examples. */
export const RULES: readonly Rule[] = [
  ...RULES_BEFORE_WRAPPERS,
  ...RULES_AFTER_WRAPPERS,
  REDIRECT_RULE,
  EMPTY_RULE,
  ASSIGNMENT_RULE,
  UNPARSEABLE_RULE,
  UNKNOWN_RULE,
  OPAQUE_RULE,
  WRAPPER_OPTION_RULE,
  TOO_DEEP_RULE,
  TOO_COMPLEX_RULE,
  ...CONSTRUCT_ONLY_RULES,
];
