// git's read-only forms: the global options that keep it reading the repository it is run in, the sub-commands that
// only read, and for each the options that neither write a file (--output), run a program (-c, --config-env,
// --exec-path=, --upload-pack, --ext-diff, --textconv, -O, --show-signature) nor point it at other config
// (--git-dir, --work-tree). `GIT_*` environment assignments are judged with the other assignments.
import type { Invocation } from './args.ts';
import type { Judgement } from './judgement.ts';
import { OTHER, READS, unlisted } from './judgement.ts';
import type { OptionTable, ReadOption } from './option-table.ts';
import { readArgs } from './option-table.ts';
import type { Word } from './parse.ts';

// Left out: -c, --config-env, --exec-path=PATH, --git-dir, --work-tree, --namespace, -p/--paginate, --super-prefix.
const GLOBAL: OptionTable = {
  short: 'C:Ph',
  long: `no-pager no-optional-locks literal-pathspecs glob-pathspecs noglob-pathspecs icase-pathspecs no-replace-objects
    no-lazy-fetch bare exec-path=? html-path man-path info-path list-cmds= version help`,
  values: { '--exec-path': (v) => v === '' },
  stopAtOperand: true,
};

/** The options of git's revision walk and diff output, shared by log, show, diff, whatchanged, stash show, … */
const REVISIONS_AND_DIFF = `oneline max-count= skip= since= until= after= before= author= committer= grep= all-match
  invert-grep regexp-ignore-case basic-regexp extended-regexp fixed-strings perl-regexp all branches=? tags=? remotes=?
  glob= exclude= graph decorate=? decorate-refs= decorate-refs-exclude= clear-decorations no-decorate source mailmap
  use-mailmap no-mailmap no-use-mailmap log-size first-parent merges no-merges min-parents= max-parents= no-min-parents
  no-max-parents not reverse topo-order date-order author-date-order walk-reflogs grep-reflog= cherry-pick cherry-mark
  cherry left-only right-only left-right boundary full-history simplify-merges simplify-by-decoration ancestry-path=?
  show-pulls dense sparse no-walk=? do-walk parents children follow full-diff abbrev-commit no-abbrev-commit abbrev=?
  no-abbrev pretty=? format= encoding= expand-tabs=? no-expand-tabs notes=? no-notes show-notes=? relative-date date=
  count patch no-patch unified= raw patch-with-raw stat=? numstat shortstat compact-summary dirstat=? cumulative
  summary patch-with-stat name-only name-status submodule=? color=? no-color color-moved=? no-color-moved
  color-moved-ws= word-diff=? word-diff-regex= color-words=? no-renames rename-empty no-rename-empty check
  ws-error-highlight= full-index binary break-rewrites=? find-renames=? find-copies=? find-copies-harder
  irreversible-delete diff-filter= pickaxe-all pickaxe-regex find-object= skip-to= rotate-to= relative=? no-relative
  text ignore-cr-at-eol ignore-space-at-eol ignore-space-change ignore-all-space ignore-blank-lines
  ignore-matching-lines= inter-hunk-context= function-context exit-code quiet no-ext-diff no-textconv
  ignore-submodules=? src-prefix= dst-prefix= no-prefix default-prefix line-prefix= ita-invisible-in-index
  ita-visible-in-index minimal patience histogram anchored= diff-algorithm= diff-merges= no-diff-merges combined-all-paths
  cached staged merge-base no-index stdin remerge-diff cc dd stat-width= stat-name-width= stat-count= stat-graph-width=
  diff-filter= output-indicator-new= output-indicator-old= output-indicator-context= in-commit-order`;

// -L takes a range and a file, -S/-G a string, -n a count; -M/-B/-C an optional score; -W is --function-context.
const LOG_TABLE: OptionTable = { short: 'n:iEFPgpuU:zmctrRM::B::C::DS:G:L:W', long: `${REVISIONS_AND_DIFF} help`, numeric: true };

const STATUS: OptionTable = {
  short: 'sbvu::zM::',
  long: `short branch porcelain=? long verbose untracked-files=? ignored=? ignore-submodules=? null column=? no-column
    ahead-behind no-ahead-behind renames no-renames find-renames=? show-stash help`,
};

const SIMPLE: Readonly<Record<string, OptionTable>> = {
  status: STATUS,
  log: LOG_TABLE,
  show: LOG_TABLE,
  diff: LOG_TABLE,
  whatchanged: LOG_TABLE,
  'diff-tree': LOG_TABLE,
  'diff-files': LOG_TABLE,
  'diff-index': LOG_TABLE,
  'rev-list': LOG_TABLE,
  shortlog: { ...LOG_TABLE, short: `${LOG_TABLE.short ?? ''}nsew::`, long: `${REVISIONS_AND_DIFF} summary numbered email committer group= help` },
  'rev-parse': {
    short: 'q',
    long: `abbrev-ref=? short=? verify quiet show-toplevel git-dir absolute-git-dir git-common-dir is-inside-work-tree
      is-inside-git-dir is-bare-repository is-shallow-repository symbolic symbolic-full-name show-cdup show-prefix
      show-superproject-working-tree show-object-format=? show-ref-format path-format= git-path= all branches=? tags=?
      remotes=? glob= exclude= since= until= after= before= default= sq sq-quote not revs-only no-revs flags no-flags
      local-env-vars resolve-git-dir= shared-index-path disambiguate= parseopt stop-at-non-option keep-dashdash`,
  },
  'ls-files': {
    short: 'cdmoiskufvtzx:X:',
    long: `cached deleted modified others ignored stage killed unmerged directory no-empty-directory exclude= exclude-from=
      exclude-per-directory= exclude-standard full-name recurse-submodules abbrev=? format= eol error-unmatch sparse
      deduplicate resolve-undo debug with-tree= null`,
  },
  'ls-tree': { short: 'rtdlz', long: 'name-only name-status object-only full-name full-tree abbrev=? format= long' },
  // Left out: --upload-pack/-u (the program run on the remote side), which runs a command of the caller's choosing.
  'ls-remote': { short: 'htqo:', long: 'heads tags branches refs quiet exit-code get-url sort= symref server-option=' },
  blame: {
    short: 'bL:lstfnseMwpC::S:',
    long: `root show-stats show-name show-number porcelain line-porcelain incremental contents= date= reverse first-parent
      encoding= abbrev=? ignore-rev= ignore-revs-file= color-lines color-by-age progress no-progress score-debug minimal
      since=`,
    numeric: true,
  },
  describe: {
    long: 'all tags contains abbrev= long always first-parent match= exclude= dirty=? broken=? candidates= exact-match debug',
  },
  // Left out: --textconv and --filters (they run the repository's conversion programs).
  'cat-file': { short: 'tsepZ', long: 'batch=? batch-check=? batch-command=? batch-all-objects buffer unordered follow-symlinks allow-unknown-type mailmap use-mailmap no-mailmap' },
  // Left out: -O/--open-files-in-pager (runs a pager program), --textconv.
  grep: {
    short: 'iIvwnlLchHeEFGPoqzaWpA:B:C:f:r',
    long: `ignore-case no-ignore-case invert-match word-regexp line-number column files-with-matches name-only
      files-without-match count full-name heading break show-function function-context extended-regexp basic-regexp
      fixed-strings perl-regexp only-matching quiet null text cached untracked no-index exclude-standard
      no-exclude-standard recurse-submodules max-depth= max-count= threads= color=? no-color all-match and or not
      after-context= before-context= context= regexp= file= no-textconv`,
    numeric: true,
  },
  'merge-base': { short: 'a', long: 'all octopus independent is-ancestor fork-point' },
  'name-rev': { long: 'tags refs= exclude= all annotate-stdin name-only undefined always' },
  'show-ref': { short: 'dsq', long: 'head heads tags branches dereference hash=? abbrev=? verify exists quiet' },
  'for-each-ref': { long: 'count= shell perl python tcl sort= format= color=? points-at= merged=? no-merged=? contains=? no-contains=? ignore-case omit-empty exclude= include-root-refs' },
  'count-objects': { short: 'vH', long: 'verbose human-readable' },
  'show-branch': { short: 'ar', long: 'all remotes topo-order date-order current sparse more=? list merge-base independent no-name sha1-name topics reflog=? color=? no-color' },
  'check-ignore': { short: 'qvn', long: 'quiet verbose non-matching no-index stdin' },
  'check-attr': { short: 'a', long: 'all cached stdin source=' },
  version: { long: 'build-options' },
  help: { short: 'aigmw', long: 'all guides config man web info verbose' },
};

const hasAny = (options: readonly ReadOption[], names: readonly string[]): boolean => options.some((o) => names.includes(o.name));

/** `git branch` and `git tag` list, unless given a name without --list (which creates, renames or deletes). */
const LISTING: Readonly<Record<string, OptionTable>> = {
  branch: {
    short: 'arvlq',
    long: `all remotes verbose list contains= no-contains= merged=? no-merged=? points-at= sort= format= show-current
      color=? no-color column=? no-column abbrev=? no-abbrev ignore-case omit-empty`,
  },
  tag: {
    short: 'ln::',
    long: 'list contains= no-contains= merged=? no-merged=? points-at= sort= format= color=? column=? no-column ignore-case omit-empty',
  },
};

function listing(sub: string, args: readonly Word[]): Judgement {
  const table = LISTING[sub];
  if (table === undefined) return OTHER;
  const reading = readArgs(args, table);
  if (!reading.ok) return unlisted(reading.why);
  return reading.operands.length === 0 || hasAny(reading.options, ['-l', '--list']) ? READS : OTHER;
}

const CONFIG_GETS = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--list', '-l'];
const CONFIG: OptionTable = {
  short: 'lfz',
  long: `get get-all get-regexp get-urlmatch list show-origin show-scope global system local worktree file= blob= name-only
    null type= bool int bool-or-int path expiry-date default= includes no-includes`,
};

function config(args: readonly Word[]): Judgement {
  const [verb, ...rest] = args;
  // git 2.46's `git config get|list`.
  if (verb?.value === 'get' || verb?.value === 'list') return byReading(readArgs(rest, CONFIG));
  const reading = readArgs(args, CONFIG);
  if (!reading.ok) return unlisted(reading.why);
  return hasAny(reading.options, CONFIG_GETS) ? READS : OTHER;
}

const byReading = (reading: ReturnType<typeof readArgs>): Judgement => (reading.ok ? READS : unlisted(reading.why));

/** Sub-commands with verbs of their own: the verbs that only read, and the options each takes. */
function verbed(sub: string, args: readonly Word[]): Judgement {
  const [verb, ...rest] = args;
  switch (sub) {
    case 'remote':
      if (verb === undefined || verb.value === '-v' || verb.value === '--verbose') return args.length <= 1 ? READS : OTHER;
      if (verb.value === 'show') return byReading(readArgs(rest, { short: 'n' }));
      if (verb.value === 'get-url') return byReading(readArgs(rest, { long: 'push all' }));
      return OTHER;
    case 'stash':
      if (verb?.value === 'list') return byReading(readArgs(rest, LOG_TABLE));
      if (verb?.value === 'show') return byReading(readArgs(rest, { ...LOG_TABLE, long: `${REVISIONS_AND_DIFF} include-untracked only-untracked` }));
      return OTHER;
    case 'reflog':
      if (verb === undefined || verb.value === 'show' || verb.value?.startsWith('-') === true) return byReading(readArgs(verb?.value === 'show' ? rest : args, LOG_TABLE));
      if (verb.value === 'exists') return rest.length === 1 ? READS : OTHER;
      return OTHER;
    default:
      return OTHER;
  }
}

/** How git is judged: its global options, then its sub-command and that sub-command's options. */
export function judgeGit(inv: Invocation): Judgement {
  const global = readArgs(inv.args, GLOBAL);
  if (!global.ok) return unlisted(global.why);
  const [subWord, ...args] = global.operands;
  if (subWord === undefined) return READS;
  const sub = subWord.value;
  if (sub === undefined) return unlisted(`${subWord.text} is only known at run time`);
  const table = SIMPLE[sub];
  if (table !== undefined) return byReading(readArgs(args, table));
  if (sub in LISTING) return listing(sub, args);
  if (sub === 'config') return config(args);
  return verbed(sub, args);
}

/** git's tables, for the tests that prove every listed option reads. */
export const GIT_TABLES = { global: GLOBAL, subcommands: SIMPLE } as const;
