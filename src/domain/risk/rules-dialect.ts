// Fail closed where the shell that runs a command (dash, as `sh -c`; bash behind ssh or `bash -c`) may read it
// differently from the classifier: aliases, functions, arithmetic commands, traps, bash-only quoting, comments a
// backslash seems to continue, builtins the classifier does not model, and changes to how names are looked up.
// Destructive, so that nobody can open an assent window over a command whose meaning is not known.
import type { Invocation } from './args.ts';
import { named, values } from './args.ts';
import type { Construct } from './parse.ts';
import type { Rule } from './rule.ts';

const DIFFERENT = 'the shell may read this differently from the classifier';

/** Variables that change which program a name runs or how words split. */
const LOOKUP_NAMES = new Set(['PATH', 'IFS', 'ENV', 'BASH_ENV', 'SHELLOPTS', 'BASHOPTS', 'PS4', 'GLOBIGNORE', 'CDPATH', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT']);

const assignedName = (prefix: string): string | undefined => /^([A-Za-z_][A-Za-z0-9_]*)\+?=/.exec(prefix)?.[1];

/** Builtins of bash or dash that the classifier has no rule for. */
const UNMODELLED_BUILTINS = ['builtin', 'enable', 'bind', 'caller', 'compgen', 'complete', 'compopt', 'coproc', 'disown', 'fc', 'history', 'mapfile', 'readarray', 'suspend', 'ulimit', 'logout', 'getopts', 'select', 'bg', 'fg', 'jobs'];

// `set` options that only make a script stricter or louder; any other changes how the rest is parsed or run.
const SAFE_SET_LETTERS = /^[-+][eEuxvCT]+$/;
const SAFE_SET_LONG = new Set(['errexit', 'nounset', 'xtrace', 'verbose', 'pipefail', 'noclobber', 'errtrace', 'functrace']);

/** The lookup variable a bare assignment (`PATH=/x` on its own) sets, if any. */
export function lookupAssigned(assigns: readonly { readonly prefix: string }[]): string | undefined {
  return assigns.map((w) => assignedName(w.prefix)).find((n) => n !== undefined && LOOKUP_NAMES.has(n));
}

function unsafeSet(inv: Invocation): string | undefined {
  const args = inv.args.map((w) => w.value);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === undefined) return 'its options are only known at run time';
    if (a === '--' || a === '-') return undefined;
    if (/^[-+][eEuxvCT]*o$/.test(a)) {
      const name = args[i + 1];
      if (name === undefined) return undefined;
      if (!SAFE_SET_LONG.has(name)) return `set ${a} ${name} changes how the shell parses or runs what follows`;
      i++;
      continue;
    }
    if (!/^[-+]/.test(a)) return undefined;
    if (!SAFE_SET_LETTERS.test(a)) return `set ${a} changes how the shell parses or runs what follows`;
  }
  return undefined;
}

function changesLookup(inv: Invocation): string | undefined {
  if (named('export', 'readonly', 'local', 'declare', 'typeset')(inv)) {
    if (values(inv).some((v) => /^-[^-]*n/.test(v))) return `${inv.name ?? ''} -n makes a name refer to another variable`;
    const name = inv.args.map((w) => assignedName(w.prefix)).find((n) => n !== undefined && LOOKUP_NAMES.has(n));
    return name === undefined ? undefined : `it sets ${name}, which changes what later names run`;
  }
  if (named('read', 'printf', 'getopts')(inv)) {
    const name = values(inv).find((v) => LOOKUP_NAMES.has(v));
    return name === undefined ? undefined : `it sets ${name} at run time, which changes what later names run`;
  }
  return undefined;
}

function dialectBuiltin(inv: Invocation): string | undefined {
  if (named(...UNMODELLED_BUILTINS)(inv)) return `${inv.name ?? ''} is a shell builtin the classifier does not model`;
  if (named('command')(inv) && values(inv).some((v) => /^-[^-]*p/.test(v))) return 'command -p looks the name up in another path';
  if (named('hash')(inv) && values(inv).some((v) => /^-[^-]*p/.test(v))) return 'hash -p binds a name to another program';
  if (named('exec')(inv) && inv.args.length > 0) return 'exec replaces the shell with a command';
  if (named('set')(inv)) return unsafeSet(inv);
  if (named('shopt')(inv) && values(inv).some((v) => /^-[^-]*[suo]/.test(v))) return 'shopt changes how the shell parses or runs what follows';
  return changesLookup(inv);
}

const rule = (id: string, reason: string, examples: readonly string[], match?: (inv: Invocation) => boolean, detail?: (inv: Invocation) => string | undefined): Rule => ({
  id, class: 'destructive', reason: `${DIFFERENT}: ${reason}`, examples, ...(match === undefined ? {} : { match }), ...(detail === undefined ? {} : { detail }),
});

export const ALIAS_RULE = rule('dialect-alias', 'an alias changes what a later name runs', ["alias ls='rm -rf /srv/x'\nls", 'unalias ls', "sh -c 'alias ls=id; ls'"], named('alias', 'unalias'));
export const TRAP_RULE = rule('dialect-trap', 'a trap runs code later, on a signal or on exit', ["trap 'rm -rf /tmp/x' EXIT", 'trap - INT'], named('trap'));
export const LET_RULE = rule('dialect-arithmetic', 'an arithmetic command: dash runs `((…))` as a command in two subshells, bash evaluates it', ['((touch /tmp/x))', 'let x=1+1', 'uptime; ((i++))'], named('let'));
export const BUILTIN_RULE = rule(
  'dialect-builtin',
  'it changes how the shell finds or runs commands',
  ['builtin cd /tmp', 'enable -n echo', 'command -p ls', 'hash -p /tmp/evil ls', 'exec ls', 'set -o posix', 'shopt -s expand_aliases', 'export PATH=/tmp/evil:$PATH; ls', 'PATH=/tmp/evil', 'IFS=/', 'local IFS=x', 'declare -n x=PATH', 'read PATH', 'ulimit -n 1', 'fc -s'],
  (inv) => dialectBuiltin(inv) !== undefined,
  dialectBuiltin,
);

/** Constructs found in the syntax itself, each with the rule that fails it closed. */
export const CONSTRUCT_RULES: Readonly<Record<Construct, Rule>> = {
  arithmetic: LET_RULE,
  'arithmetic-names': rule(
    'dialect-arithmetic-names',
    "bash evaluates a variable's value as arithmetic here, and a value like a[$(cmd)] runs cmd; dash does not",
    ["bash -c 'x=\"a[\\$(rm -rf /srv/x)]\"; echo $((x))'", 'echo $((i + 1))', 'echo ${a[i]}', 'echo ${s:n}', '[[ $n -eq 1 ]] && ls', 'declare -i n=x'],
    undefined,
  ),
  function: rule('dialect-function', 'a function definition changes what a later name runs', ['f() { ls; }; f', 'ls() { id; }; ls', 'function f { ls; }'], undefined),
  'comment-continuation': rule('dialect-comment', 'a comment ending in a backslash: the shell ends the comment at the newline and runs the next line', ['uptime # \\\nrm -rf /srv/x'], undefined),
  'ansi-quoting': rule('dialect-quoting', "$'…' and $\"…\" quoting is bash's; dash reads a literal $ and ends the quote elsewhere", ["echo $'\\' ; rm -rf /srv/x ; #'", 'echo $"hi"'], undefined),
  'bare-lookup-assignment': BUILTIN_RULE,
  'brace-expansion': rule('dialect-brace', 'bash expands {a,b} into several words, which may be another program or an option; dash passes it as it is', ["bash -c 'sort {--compress-program=sh,f}'", '{rm,-rf,x}', 'ls {-a,/srv}'], undefined),
};

export const DIALECT_RULES: readonly Rule[] = [ALIAS_RULE, TRAP_RULE, LET_RULE, BUILTIN_RULE];
export const CONSTRUCT_ONLY_RULES: readonly Rule[] = [CONSTRUCT_RULES['arithmetic-names'], CONSTRUCT_RULES.function, CONSTRUCT_RULES['comment-continuation'], CONSTRUCT_RULES['ansi-quoting'], CONSTRUCT_RULES['brace-expansion']];
