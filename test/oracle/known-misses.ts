// The classifier's misses the oracle finds on today's rules, by class: each case listed here is asserted to be STILL a
// miss (its findings include these kinds), so a classifier change that fixes one fails its test until the entry goes.
// Remove an entry (or the commands in `only`) when the classifier work that fixes it merges. docs/oracle.md.
import type { FindingKind } from './findings.ts';

export interface KnownMiss {
  /** The corpus group (test/oracle/corpus.ts) whose cases miss. */
  readonly group: string;
  /** Only these commands of the group miss; absent when every case of the group does. */
  readonly only?: readonly string[];
  /** The findings every case of the entry shows at least. */
  readonly kinds: readonly FindingKind[];
  readonly why: string;
}

const RUN_WRITE = ['unjudged-program', 'write-outside-scratch'] as const;

export const KNOWN_MISSES: readonly KnownMiss[] = [
  { group: 'issue glob expands to an option', kinds: RUN_WRITE, why: 'a glob expands to file names that are options (--compress-program=sh, -S1): the words the classifier saw are not the argv' },
];

/** The entry a case falls under, if it is a known miss. */
export function knownMiss(group: string, command: string): KnownMiss | undefined {
  return KNOWN_MISSES.find((m) => m.group === group && (m.only === undefined || m.only.includes(command)));
}
