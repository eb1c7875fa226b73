// Building policies and command variants for the policy tests.
import { classify } from '../../../src/domain/risk/index.ts';
import type { PolicyDecision, Policy } from '../../../src/domain/policy/index.ts';
import { decide, loadPolicy } from '../../../src/domain/policy/index.ts';

/** A way of writing a command around another. */
type Form = (c: string) => string;

export const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** A policy from rules written as in a document; a problem fails the test that builds it. */
export function policyOf(...rules: readonly Record<string, unknown>[]): Policy {
  const loaded = loadPolicy({ rules: rules.map((r, i) => ({ id: `rule-${i}`, justification: 'for the test', ...r })) });
  if (!loaded.ok) throw new Error(`policy refused: ${JSON.stringify(loaded.problems)}`);
  return loaded.policy;
}

/** The decision on a command, with the classifier's own verdict, on an LXC container. */
export const decideOn = (policy: Policy | null, command: string, target = 'lxc:app'): PolicyDecision => decide(policy, command, target, classify(command));

/** Wrappers the classifier sees through: what they run is the part it judges, and the only one. */
export const WRAPPERS: readonly Form[] = [
  (c) => c,
  (c) => `sudo ${c}`,
  (c) => `sudo -u root -- ${c}`,
  (c) => `sh -c ${quote(c)}`,
  (c) => `bash -c ${quote(c)}`,
  (c) => `bash -lc ${quote(c)}`,
  (c) => `sudo sh -c ${quote(c)}`,
  (c) => `pct exec 101 -- ${c}`,
  (c) => `pct exec 101 -- bash -c ${quote(c)}`,
  (c) => `qm guest exec 101 -- ${c}`,
  (c) => `ssh root@pve ${quote(c)}`,
  (c) => `ssh -p 2222 root@pve ${c}`,
  (c) => `env ${c}`,
  (c) => `env -i LANG=C ${c}`,
  (c) => `timeout 30 ${c}`,
  (c) => `timeout -k 5 30 ${c}`,
  (c) => `nice -n 10 ${c}`,
  (c) => `ionice -c3 ${c}`,
  (c) => `nohup ${c}`,
];

/** Layouts in which the command is the only simple command, once or twice. */
export const ALONE: readonly Form[] = [
  (c) => c,
  (c) => `${c} && ${c}`,
  (c) => `${c}; ${c}`,
  (c) => `${c} || ${c}`,
  (c) => `(${c})`,
  (c) => `{ ${c}; }`,
  (c) => `for i in 1; do ${c}; done`,
];

/** Layouts that put other simple commands beside it: lists, pipes, substitutions, conditions. */
export const BESIDE: readonly Form[] = [
  (c) => `true && ${c}`,
  (c) => `false || ${c}`,
  (c) => `true; ${c}`,
  (c) => `${c}; true`,
  (c) => `true\n${c}`,
  (c) => `echo go | ${c}`,
  (c) => `${c} | cat`,
  (c) => `echo "$(${c})"`,
  (c) => `cat <(${c})`,
  (c) => `if true; then ${c}; fi`,
];

export const LAYOUTS: readonly Form[] = [...ALONE, ...BESIDE];

/** Wrappers that run a script: they take a whole layout inside. */
export const SHELLS: readonly Form[] = [
  (c) => `sh -c ${quote(c)}`,
  (c) => `bash -c ${quote(c)}`,
  (c) => `sudo sh -c ${quote(c)}`,
  (c) => `pct exec 101 -- bash -c ${quote(c)}`,
  (c) => `ssh root@pve ${quote(c)}`,
];

/**
 * Every spelling in every wrapper, laid out every way, and every layout handed to a shell. With `turns`, each
 * spelling in each wrapper takes the first layout and `turns` others in rotation, so that a large set still covers
 * every layout without taking minutes.
 */
export function variants(spellings: readonly string[], wrappers: readonly Form[] = WRAPPERS, layouts: readonly Form[] = LAYOUTS, turns?: number): string[] {
  let turn = 0;
  const some = (): readonly Form[] => {
    if (turns === undefined) return layouts;
    return [layouts[0], ...Array.from({ length: turns }, () => layouts[1 + (turn++ % (layouts.length - 1))])].filter((l) => l !== undefined);
  };
  return spellings.flatMap((s) => [
    ...wrappers.flatMap((wrap) => some().map((lay) => lay(wrap(s)))),
    ...SHELLS.flatMap((shell) => some().map((lay) => shell(lay(s)))),
  ]);
}
