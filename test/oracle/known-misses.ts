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

const RUN = ['unjudged-program'] as const;
const RUN_WRITE = ['unjudged-program', 'write-outside-scratch'] as const;
const FOREIGN = ['foreign-program', 'unjudged-program', 'write-outside-scratch'] as const;

const DASH_ALIAS = 'dash expands an alias defined on an earlier line; the classifier judges the name, not what the alias runs';
const DASH_COMMENT = 'a backslash ends a comment in every shell; the classifier reads the next line as part of the comment and never judges it';
const DASH_ARITH = "dash has no ((…)): it is two subshells running the words as a command; the classifier reads an arithmetic command (shell-builtin, or unparseable) and judges nothing inside";
const DASH_ANSI = "dash has no $'…' quoting: $'\\' ends after the backslash and the rest of the line runs; the classifier reads one quoted word";
const PATH_HIJACK = 'a changed PATH (or a path to a look-alike) makes the name the classifier judged run another program';

export const KNOWN_MISSES: readonly KnownMiss[] = [
  { group: 'rule nesting-too-deep', kinds: RUN, why: 'past the depth the walk follows, the command runs unjudged, and config_mutation runs unasked in an assent window' },
  { group: 'issue dash alias', kinds: RUN_WRITE, why: DASH_ALIAS },
  { group: 'attack alias on an earlier line', kinds: RUN, why: DASH_ALIAS },
  { group: 'attack alias on an earlier line, through sh -c', kinds: RUN_WRITE, why: DASH_ALIAS },
  { group: 'attack alias on an earlier line, through sudo sh -c', kinds: RUN_WRITE, why: DASH_ALIAS },
  { group: 'attack alias on an earlier line, through pct exec sh -c', kinds: RUN_WRITE, why: DASH_ALIAS },
  { group: 'attack alias on an earlier line, through timeout sh -c', kinds: RUN_WRITE, why: DASH_ALIAS },
  { group: 'attack alias on an earlier line, through ssh', kinds: RUN_WRITE, why: DASH_ALIAS },
  { group: 'issue dash comment continuation', kinds: RUN_WRITE, why: DASH_COMMENT },
  { group: 'attack comment continued by a backslash', kinds: RUN_WRITE, why: DASH_COMMENT },
  { group: 'attack comment continued by a backslash, through sh -c', kinds: RUN_WRITE, why: DASH_COMMENT },
  { group: 'attack comment continued by a backslash, through bash -c', kinds: RUN_WRITE, why: `${DASH_COMMENT} (bash too)` },
  { group: 'attack comment continued by a backslash, through sudo sh -c', kinds: RUN_WRITE, why: DASH_COMMENT },
  { group: 'attack comment continued by a backslash, through pct exec sh -c', kinds: RUN_WRITE, why: DASH_COMMENT },
  { group: 'attack comment continued by a backslash, through timeout sh -c', kinds: RUN_WRITE, why: DASH_COMMENT },
  { group: 'attack comment continued by a backslash, through ssh', kinds: RUN_WRITE, why: DASH_COMMENT },
  { group: 'issue dash arithmetic command', kinds: RUN_WRITE, why: DASH_ARITH },
  { group: 'attack arithmetic command', kinds: RUN, why: DASH_ARITH },
  { group: 'attack arithmetic command, through sh -c', kinds: RUN, why: DASH_ARITH },
  { group: 'attack arithmetic command, through sudo sh -c', kinds: RUN, why: DASH_ARITH },
  { group: 'attack arithmetic command, through pct exec sh -c', kinds: RUN, why: DASH_ARITH },
  { group: 'attack arithmetic command, through timeout sh -c', kinds: RUN, why: DASH_ARITH },
  { group: 'attack arithmetic command, through ssh', kinds: RUN, why: DASH_ARITH },
  { group: 'issue dash quoting', kinds: RUN_WRITE, why: DASH_ANSI },
  { group: "attack $'…' quoting", kinds: RUN, why: DASH_ANSI },
  { group: "attack $'…' quoting, through sh -c", kinds: RUN_WRITE, why: DASH_ANSI },
  { group: "attack $'…' quoting, through sudo sh -c", kinds: RUN_WRITE, why: DASH_ANSI },
  { group: "attack $'…' quoting, through pct exec sh -c", kinds: RUN_WRITE, why: DASH_ANSI },
  { group: "attack $'…' quoting, through timeout sh -c", kinds: RUN_WRITE, why: DASH_ANSI },
  { group: "attack $'…' quoting, through ssh", kinds: RUN_WRITE, why: DASH_ANSI },
  { group: 'issue git option runs code', kinds: RUN, why: 'git -c core.fsmonitor and --upload-pack run a shell command, and an unlisted option is only config_mutation, which runs unasked in an assent window' },
  { group: 'issue sort option runs code', kinds: RUN, why: "sort --compress-program runs a program, and an unlisted option is only config_mutation, which runs unasked in an assent window" },
  { group: 'issue glob expands to an option', kinds: RUN_WRITE, why: 'a glob expands to file names that are options (--compress-program=sh, -S1): the words the classifier saw are not the argv' },
  {
    group: 'issue environment assignment',
    only: ['PATH=/scratch/evil:$PATH ls'],
    kinds: FOREIGN,
    why: `assignments before a command are not judged: ${PATH_HIJACK}`,
  },
  {
    group: 'issue environment assignment',
    only: ["GIT_SSH_COMMAND='touch /root/oracle-git-ssh' git ls-remote ssh://host/repo", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch /root/oracle-git-env' git status"],
    kinds: RUN,
    why: 'assignments before a command are not judged: GIT_SSH_COMMAND and GIT_CONFIG_* make git run a shell command',
  },
  { group: 'issue secret read', kinds: ['secret-read'], why: 'reading a private key, /etc/shadow or cloud credentials is read-only-tool, so the secret lands in the log unasked' },
  { group: 'issue script run by path', only: ['./cleanup.sh'], kinds: FOREIGN.slice(0, 2), why: 'a script run by path is unknown-command (config_mutation, runs in an assent window) though what it runs is unseen' },
  { group: 'attack PATH exported', kinds: FOREIGN, why: PATH_HIJACK },
  { group: 'attack PATH assigned', kinds: FOREIGN, why: PATH_HIJACK },
  { group: 'attack path-qualified look-alike', kinds: FOREIGN, why: 'the classifier judges a program by its base name, so ./evil/ls is ls' },
  { group: 'attack PATH exported, through sh -c', kinds: FOREIGN, why: PATH_HIJACK },
  { group: 'attack PATH exported, through bash -c', kinds: FOREIGN, why: PATH_HIJACK },
  { group: 'attack PATH exported, through sudo sh -c', kinds: FOREIGN, why: PATH_HIJACK },
  { group: 'attack PATH exported, through pct exec sh -c', kinds: FOREIGN, why: PATH_HIJACK },
  { group: 'attack PATH exported, through timeout sh -c', kinds: FOREIGN, why: PATH_HIJACK },
  { group: 'attack PATH exported, through ssh', kinds: FOREIGN, why: PATH_HIJACK },
];

/** The entry a case falls under, if it is a known miss. */
export function knownMiss(group: string, command: string): KnownMiss | undefined {
  return KNOWN_MISSES.find((m) => m.group === group && (m.only === undefined || m.only.includes(command)));
}
