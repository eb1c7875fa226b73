// Wrappers: commands that run another command (pct exec, sudo, bash -c, ssh, timeout, xargs, find -exec, …).
// unwrap says what a wrapper runs so the classifier judges that instead of the wrapper.
// One file past 500 lines on purpose: every wrapper's reading (its option table and what it runs) sits beside the
// others, so a reviewer sees at once which wrappers exist and that each is read the same strict way.
import type { Invocation } from './args.ts';
import type { Word } from './parse.ts';
import { literalWord } from './parse.ts';
import { IP_GLOBAL, ipObject } from './ip.ts';
import { readArgs } from './option-table.ts';

/** What a wrapper runs: an argv, a shell script to parse, or something unknowable before it runs. */
export type Payload =
  | { readonly kind: 'argv'; readonly argv: readonly Word[] }
  | { readonly kind: 'script'; readonly source: string }
  | {
      readonly kind: 'unknown';
      readonly why: string;
      /** Set when what it runs is a program the command line does not show (a script file, its input, text known only
       * at run time), as opposed to a tunnel, an editor or a missing command. */
      readonly code?: true;
      /** Set when the doubt is a wrapper option the classifier does not know (what it runs is judged both ways). */
      readonly option?: true;
    };

interface OptionSpec {
  /** Short options that take a value, as letters (`u` for `-u USER`, `-uUSER`). */
  readonly short?: string;
  /** Long options that take a value in the next word unless written `--opt=value`. */
  readonly long?: readonly string[];
}

/** Index of the first word after the options (and after a `--`); a word only known at run time ends the options. */
function skipOptions(args: readonly Word[], spec: OptionSpec, from = 0): number {
  let i = from;
  while (i < args.length) {
    const value = args[i]?.value;
    if (value === undefined || !value.startsWith('-') || value === '-') return i;
    if (value === '--') return i + 1;
    if (value.startsWith('--')) {
      // getopt_long takes a prefix of a long option (`sudo --us root`) as that option: any valued one it may stand for.
      const valued = !value.includes('=') && (spec.long ?? []).some((l) => l === value || (value.length > 2 && l.startsWith(value)));
      i += valued ? 2 : 1;
      continue;
    }
    const cluster = value.slice(1);
    const at = [...cluster].findIndex((c) => (spec.short ?? '').includes(c));
    // A valued letter takes the rest of the cluster, or the next word when it ends the cluster.
    i += at !== -1 && at === cluster.length - 1 ? 2 : 1;
  }
  return i;
}

const argv = (words: readonly Word[]): Payload => ({ kind: 'argv', argv: words });
const unknown = (why: string): Payload => ({ kind: 'unknown', why });
const hidden = (why: string): Payload => ({ kind: 'unknown', why, code: true });
const unknownOption = (why: string): Payload => ({ kind: 'unknown', why, option: true });

function command(words: readonly Word[], missing: string | Payload): Payload[] {
  if (words.length > 0) return [argv(words)];
  return [typeof missing === 'string' ? unknown(missing) : missing];
}

// Wrappers read strictly: every option they have is listed (as getopt reads it, stopping at the first operand), so
// an option the classifier does not know, or a word only known at run time where one could stand, cannot shift which
// word is taken for the program. An unknown option is read both ways (taking no value and taking the next word), and
// both readings are judged; more doubt than that and what runs is not known.
interface StrictSpec {
  /** getopt's short options: `x` takes no value, `x:` one (attached or the next word), `x::` only attached. */
  readonly short: string;
  /** Long options: `name` takes no value, `name=` one (`=v` or the next word), `name=?` only `=v`. */
  readonly long: string;
  /** `-NUM`, `--NUM` and `-+NUM` are options too (nice's old adjustment). */
  readonly numeric?: true;
}

type Arity = 'none' | 'required' | 'optional';

function shortArity(spec: string, letter: string): Arity | undefined {
  const at = spec.indexOf(letter);
  if (at === -1 || letter === ':') return undefined;
  if (spec.startsWith('::', at + 1)) return 'optional';
  return spec.charAt(at + 1) === ':' ? 'required' : 'none';
}

/** A long option as getopt_long resolves it: the exact name, or the one name it is a prefix of. */
function longArity(spec: string, name: string): { name: string; arity: Arity } | undefined {
  const entries = spec.split(/\s+/).filter((e) => e !== '').map((e) => {
    const arity: Arity = e.endsWith('=?') ? 'optional' : e.endsWith('=') ? 'required' : 'none';
    return { name: e.replace(/=\??$/, ''), arity };
  });
  const exact = entries.find((e) => e.name === name);
  if (exact !== undefined) return exact;
  const prefixed = entries.filter((e) => name !== '' && e.name.startsWith(name));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

interface StrictReading {
  /** Where the operands start, one index per reading (two when an unknown option may or may not take a value). */
  readonly starts: readonly number[];
  /** The options read on the first reading, as `-x` or `--name`, with their value ('' for none). */
  readonly options: readonly { readonly name: string; readonly value: string }[];
  /** The first option the classifier does not know, if any. */
  readonly unknown?: string;
  /** Why no reading can be trusted (a word known only at run time, or several unknown options). */
  readonly doubt?: string;
}

function readStrict(args: readonly Word[], spec: StrictSpec, from: number, branched: boolean): StrictReading {
  const options: { name: string; value: string }[] = [];
  let i = from;
  const branch = (name: string, at: number): StrictReading => {
    if (branched) return { starts: [], options, doubt: `${name} and another option are not ones the classifier knows` };
    const one = readStrict(args, spec, at + 1, true);
    const two = readStrict(args, spec, at + 2, true);
    const doubt = one.doubt ?? two.doubt;
    const starts = [...new Set([...one.starts, ...two.starts])].filter((s) => s <= args.length);
    return { starts, options, unknown: name, ...(doubt === undefined ? {} : { doubt }) };
  };
  while (i < args.length) {
    const value = args[i]?.value;
    if (value === undefined) return { starts: [], options, doubt: 'a word before the command is only known at run time' };
    if (!value.startsWith('-') || value === '-') break;
    if (value === '--') {
      i++;
      break;
    }
    if (spec.numeric === true && /^-[-+]?\d+$/.test(value)) {
      options.push({ name: value, value: '' });
      i++;
      continue;
    }
    if (value.startsWith('--')) {
      const eq = value.indexOf('=');
      const found = longArity(spec.long, value.slice(2, eq === -1 ? undefined : eq));
      if (found === undefined || (found.arity === 'none' && eq !== -1)) return branch(value, i);
      const attached = eq !== -1;
      const next = found.arity === 'required' && !attached;
      options.push({ name: `--${found.name}`, value: attached ? value.slice(eq + 1) : next ? (args[i + 1]?.value ?? '') : '' });
      i += next ? 2 : 1;
      continue;
    }
    let step = 1;
    for (let c = 1; c < value.length; c++) {
      const letter = value.charAt(c);
      const arity = shortArity(spec.short, letter);
      if (arity === undefined) return branch(value, i);
      if (arity === 'none') {
        options.push({ name: `-${letter}`, value: '' });
        continue;
      }
      const rest = value.slice(c + 1);
      if (rest === '' && arity === 'required') step = 2;
      options.push({ name: `-${letter}`, value: rest !== '' || arity === 'optional' ? rest : (args[i + 1]?.value ?? '') });
      break;
    }
    i += step;
  }
  return { starts: [Math.min(i, args.length)], options };
}

/** The option-reading wrapper's payloads: what each reading runs, after `operands` fixed words (a duration, a file). */
function strictly(inv: Invocation, spec: StrictSpec, operands: number, missing: string | Payload, runs: (args: readonly Word[]) => Payload[] = (rest) => command(rest, missing)): Payload[] {
  const reading = readStrict(inv.args, spec, 0, false);
  const name = inv.name ?? '';
  if (reading.doubt !== undefined) return [hidden(`${reading.doubt}, so which program ${name} runs is not known`)];
  const payloads = reading.starts.flatMap((start) => runs(inv.args.slice(start + operands)));
  if (reading.unknown === undefined) return payloads;
  return [unknownOption(`${reading.unknown} is not an option of ${name} the classifier knows; what follows is judged both as its value and as the command`), ...payloads];
}

// Without a command these run a login shell, which reads its commands from its input.
const LOGIN_SHELL = (who: string): Payload => hidden(`without a command ${who} runs a shell that reads commands from its input`);

/** The words as one script, as ssh and watch hand them to a shell joined by spaces. */
function joined(words: readonly Word[], missing: string): Payload[] {
  if (words.length === 0) return [unknown(missing)];
  const parts = words.map((w) => w.value);
  if (parts.some((p) => p === undefined)) return [hidden('its command is only known at run time')];
  return [{ kind: 'script', source: parts.join(' ') }];
}

function optionsOf(args: readonly Word[], end: number): string[] {
  return args.slice(0, end).flatMap((w) => (w.value === undefined ? [] : [w.value]));
}

// The shells whose language is the one the classifier parses.
const SHELLS = ['bash', 'sh', 'dash', 'zsh', 'ksh', 'ash'];

function shell(inv: Invocation): Payload[] {
  const { args } = inv;
  let i = 0;
  let dashC = false;
  let fromInput = false;
  for (; i < args.length; i++) {
    const value = args[i]?.value;
    if (value === '-') fromInput = true;
    if (value === undefined || value === '-' || !/^[-+]/.test(value)) break;
    if (value === '--') {
      i++;
      break;
    }
    if (value.startsWith('--')) {
      if (value === '--rcfile' || value === '--init-file') i++;
      continue;
    }
    if (value.slice(1).includes('c')) dashC = true;
    // -s: the program comes from the input and the words after the options are its arguments.
    if (value.slice(1).includes('s')) fromInput = true;
    if (/[oO]$/.test(value)) i++;
  }
  const script = args[i];
  if (dashC) {
    if (script === undefined) return [unknown('-c without a command')];
    return script.value === undefined ? [hidden('its script is only known at run time')] : [{ kind: 'script', source: script.value }];
  }
  if (script !== undefined && !fromInput) return [hidden(`it runs the script file ${script.text}`)];
  return [programOnInput(inv)];
}

/** What a shell reading its program from its input runs: a here-document or here-string written out is read as shell. */
function programOnInput(inv: Invocation): Payload {
  const input = inv.redirects.findLast((r) => r.heredoc !== undefined || r.op === '<<<' || r.op === '<');
  if (input === undefined) return hidden('it runs commands read from its input (a pipe or stdin)');
  if (input.op === '<') return hidden(`it runs the commands in ${input.target.text}`);
  const body = input.heredoc ?? input.target;
  return body.value === undefined ? hidden('its input holds parts only known at run time') : { kind: 'script', source: body.value };
}

function ssh(inv: Invocation): Payload[] {
  const spec = { short: 'BbcDEeFIiJLlmOopQRSWw' };
  const hostAt = skipOptions(inv.args, spec);
  const commandAt = skipOptions(inv.args, spec, hostAt + 1);
  const options = [...optionsOf(inv.args, hostAt), ...optionsOf(inv.args.slice(hostAt + 1), commandAt - hostAt - 1)];
  if (options.some((o) => /^-[^-]*N/.test(o))) return [unknown('it only opens a tunnel')];
  const remote = inv.args.slice(commandAt);
  return remote.length === 0 ? [LOGIN_SHELL('ssh')] : joined(remote, 'ssh without a command');
}

function sudo(inv: Invocation): Payload[] {
  const at = skipOptions(inv.args, { short: 'CDghpRrtTUu', long: ['--user', '--group', '--chdir', '--host', '--prompt', '--role', '--type', '--close-from', '--command-timeout', '--other-user'] });
  const options = optionsOf(inv.args, at);
  if (options.some((o) => o === '--edit' || /^-[^-]*e/.test(o))) return [unknown('sudo -e edits files')];
  const opensShell = options.some((o) => o === '--login' || o === '--shell' || /^-[^-]*[is]/.test(o));
  return command(inv.args.slice(at), opensShell ? LOGIN_SHELL('sudo -i or -s') : 'without a command sudo only lists or changes its own state');
}

const ENV: StrictSpec = {
  short: 'iu:C:S:v0',
  long: 'ignore-environment null unset= chdir= split-string= debug default-signal=? ignore-signal=? block-signal=? list-signal-handling help version',
};

function env(inv: Invocation): Payload[] | undefined {
  const reading = readStrict(inv.args, ENV, 0, false);
  if (reading.doubt !== undefined) return [hidden(`${reading.doubt}, so which program env runs is not known`)];
  const split = reading.options.find((o) => o.name === '-S' || o.name === '--split-string');
  const payloads = reading.starts.flatMap((start): Payload[] => {
    let i = start;
    // A lone `-` (after the options) is -i.
    if (inv.args[i]?.value === '-') i++;
    while (i < inv.args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(inv.args[i]?.prefix ?? '')) i++;
    const rest = inv.args.slice(i);
    // -S splits its value into words that go in front of the rest: read together as one script.
    if (split !== undefined) return joined([literalWord(split.value), ...rest], '-S without a command');
    // env with no command prints the environment: it is a command of its own, not a wrapper.
    return rest.length > 0 ? [argv(rest)] : [];
  });
  if (payloads.length === 0) return undefined;
  return reading.unknown === undefined ? payloads : [unknownOption(`${reading.unknown} is not an option of env the classifier knows; what follows is judged both as its value and as the command`), ...payloads];
}

function pct(inv: Invocation): Payload[] | undefined {
  if (inv.args[0]?.value === 'enter') return [LOGIN_SHELL('pct enter')];
  if (inv.args[0]?.value !== 'exec') return undefined;
  return command(inv.args.slice(skipOptions(inv.args, { long: ['--keep-env'] }, 2)), 'pct exec without a command');
}

function qm(inv: Invocation): Payload[] | undefined {
  if (inv.args[0]?.value !== 'guest' || inv.args[1]?.value !== 'exec') return undefined;
  const at = skipOptions(inv.args, { long: ['--pass-stdin', '--synchronous', '--timeout'] }, 3);
  return command(inv.args.slice(at), 'qm guest exec without a command');
}

function docker(inv: Invocation): Payload[] | undefined {
  const compose = inv.args[0]?.value === 'compose';
  const exec = compose ? 1 : 0;
  if (inv.args[exec]?.value !== 'exec') return undefined;
  const containerAt = skipOptions(inv.args, { short: 'euw', long: ['--env', '--env-file', '--user', '--workdir', '--detach-keys', '--index'] }, exec + 1);
  return command(inv.args.slice(containerAt + 1), 'docker exec without a command');
}

/** What find puts where `{}` stands in an -exec command: the name of each file it finds. */
const FOUND_NAME = '{}';

/**
 * find -exec (-execdir, -ok, -okdir) runs its command with `{}` replaced by each name found, wherever it stands in
 * a word: such a word is known only at run time (`-exec sort --compress-program={} x` runs a found file), and a
 * command whose name or shell script holds it runs what the names say (`-exec sh -c 'cat {}'`).
 */
function find(inv: Invocation): Payload[] | undefined {
  const payloads: Payload[] = [];
  inv.args.forEach((w, i) => {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(w.value ?? '')) return;
    const rest = inv.args.slice(i + 1);
    const end = rest.findIndex((r) => r.value === ';' || r.value === '+');
    const run = end === -1 ? rest : rest.slice(0, end);
    if (buildsCode(run, FOUND_NAME)) payloads.push(hidden(`the command it runs is built from the names it finds (${FOUND_NAME})`));
    else payloads.push(...command(filledFromInput(run, FOUND_NAME), `find ${w.value ?? ''} without a command`));
  });
  return payloads.length > 0 ? payloads : undefined;
}

function afterOptions(spec: OptionSpec, missing: string | Payload) {
  return (inv: Invocation): Payload[] => command(inv.args.slice(skipOptions(inv.args, spec)), missing);
}

function commandOrSelf(spec: OptionSpec) {
  return (inv: Invocation): Payload[] | undefined => {
    const rest = inv.args.slice(skipOptions(inv.args, spec));
    return rest.length > 0 ? [argv(rest)] : undefined;
  };
}

function su(inv: Invocation): Payload[] {
  const script = inv.args.findIndex((w) => w.value === '-c' || w.value === '--command');
  const user = inv.args.findIndex((w) => w.value === '-u');
  if (inv.name === 'runuser' && user !== -1) return command(inv.args.slice(skipOptions(inv.args, { short: 'ugGs', long: ['--user', '--group', '--supp-group', '--shell'] })), 'runuser without a command');
  if (script === -1) return [LOGIN_SHELL(inv.name ?? 'su')];
  return joined(inv.args.slice(script + 1, script + 2), '-c without a command');
}

function watch(inv: Invocation): Payload[] {
  const at = skipOptions(inv.args, { short: 'nq', long: ['--interval', '--equexit'] });
  const rest = inv.args.slice(at);
  const exec = optionsOf(inv.args, at).some((o) => o === '--exec' || /^-[^-]*x/.test(o));
  return exec ? command(rest, 'watch without a command') : joined(rest, 'watch without a command');
}

const XARGS: StrictSpec = {
  short: '0a:E:e::hi::I:l::L:n:oprs:txP:d:',
  long: 'null arg-file= delimiter= eof=? replace=? max-lines=? max-args= max-procs= max-chars= interactive verbose exit no-run-if-empty open-tty process-slot-var= show-limits help version',
};

function xargs(inv: Invocation): Payload[] {
  return strictly(inv, XARGS, 0, 'xargs without a command', (rest) => {
    // With no command, xargs runs echo.
    if (rest.length === 0) return [argv([literalWord('echo')])];
    const replace = replaceString(inv.args.slice(0, inv.args.length - rest.length));
    if (replace !== undefined && buildsCode(rest, replace)) return [hidden(`the command it runs is built from its input (${replace})`)];
    return [argv(replace === undefined ? rest : filledFromInput(rest, replace))];
  });
}

/** The placeholder xargs fills with each input item (-I R, -i, --replace), if one is set. */
function replaceString(options: readonly Word[]): string | undefined {
  let found: string | undefined;
  options.forEach((w, i) => {
    const v = w.value ?? '';
    if (v === '-I') found = options[i + 1]?.value;
    else if (v.startsWith('-I')) found = v.slice(2);
    else if (v === '-i' || v === '--replace') found = '{}';
    else if (v.startsWith('-i') || v.startsWith('--replace=')) found = v.slice(v.indexOf('=') + 1 || 2);
  });
  return found === '' ? undefined : found;
}

/**
 * The command's words with the placeholder in them as what they are: input, unknown until it runs. A word `R` is
 * any argument, an option too (`echo --compress-program=sh | xargs -I R sort R` runs sh), never the literal R. The
 * command's name is left as written: buildsCode has judged a name that holds the placeholder.
 */
function filledFromInput(rest: readonly Word[], replace: string): Word[] {
  return rest.map((w, i) => {
    const at = w.value?.indexOf(replace) ?? -1;
    return i === 0 || at === -1 ? w : { value: undefined, prefix: w.value!.slice(0, at), text: w.text };
  });
}

/** True when input items become the command's name or a shell's script, rather than plain arguments. */
function buildsCode(rest: readonly Word[], replace: string): boolean {
  const [head, ...args] = rest;
  if (head?.value?.includes(replace) === true) return true;
  if (!SHELLS.includes(head?.value?.split('/').pop() ?? '')) return false;
  const dashC = args.findIndex((w) => /^-[^-]*c/.test(w.value ?? ''));
  return dashC !== -1 && args[dashC + 1]?.value?.includes(replace) === true;
}

/** Wrappers read strictly whose command follows the options and `operands` fixed words; nothing to run is `missing`. */
function strictWrapper(spec: StrictSpec, operands: number, missing: string | Payload) {
  return (inv: Invocation): Payload[] => strictly(inv, spec, operands, missing);
}

/** Like strictWrapper, but with no command the wrapper is a command of its own (nice prints the niceness). */
function strictOrSelf(spec: StrictSpec, acts: (options: readonly string[]) => boolean = () => false) {
  return (inv: Invocation): Payload[] | undefined => {
    const reading = readStrict(inv.args, spec, 0, false);
    // Acting on running processes (ionice -p, chrt -p, taskset -p): no command is run.
    if (reading.doubt === undefined && acts(reading.options.map((o) => o.name))) return undefined;
    const payloads = strictly(inv, spec, 0, '', (rest) => (rest.length > 0 ? [argv(rest)] : []));
    return payloads.length === 0 ? undefined : payloads;
  };
}

const CHRT: StrictSpec = {
  short: 'abdD:fiphmoP:T:rRvV',
  long: 'all-tasks batch deadline fifo idle other rr reset-on-fork sched-runtime= sched-period= sched-deadline= max pid verbose help version',
};

/** chrt [options] PRIORITY COMMAND…; newer chrt lets the priority out for policies without one, so a word that is not a number is read both ways. */
function chrt(inv: Invocation): Payload[] | undefined {
  const reading = readStrict(inv.args, CHRT, 0, false);
  if (reading.doubt === undefined && reading.options.some((o) => ['-p', '--pid', '-m', '--max', '-h', '--help', '-V', '--version'].includes(o.name))) return undefined;
  return strictly(inv, CHRT, 0, 'chrt without a command', (rest) => {
    const priority = rest[0]?.value;
    if (priority !== undefined && /^\d+$/.test(priority)) return command(rest.slice(1), 'chrt without a command');
    return rest.length === 0 ? [unknown('chrt without a command')] : [...command(rest.slice(1), 'chrt without a command'), argv(rest)];
  });
}

const TASKSET: StrictSpec = { short: 'apchV', long: 'all-tasks pid cpu-list help version' };

const FLOCK: StrictSpec = {
  short: 'sexnoFuw:E:hV',
  long: 'shared exclusive unlock nonblock nb timeout= wait= conflict-exit-code= close no-fork verbose help version',
};

/** flock [options] FILE COMMAND…, or FILE -c STRING (run by $SHELL -c); with a descriptor and no command it only locks. */
function flock(inv: Invocation): Payload[] | undefined {
  const payloads = strictly(inv, FLOCK, 1, '', (rest) => {
    const head = rest[0]?.value;
    // flock runs the string with `$SHELL -c` (sh when unset): judged as that shell running it.
    if (head === '-c' || head === '--command') return rest.length > 1 ? [argv([literalWord('sh'), literalWord('-c'), ...rest.slice(1, 2)])] : [unknown('flock -c without a command')];
    return rest.length > 0 ? [argv(rest)] : [];
  });
  return payloads.length === 0 ? undefined : payloads;
}

/** `ip [options] netns exec NAME COMMAND…` (`ip -all netns exec COMMAND…`), `ip vrf exec NAME COMMAND…`; ip takes any prefix of exec. */
function ip(inv: Invocation): Payload[] | undefined {
  const global = readArgs(inv.args, IP_GLOBAL);
  const isExec = (w: Word | undefined): boolean => w?.value !== undefined && w.value !== '' && 'exec'.startsWith(w.value);
  if (global.ok) {
    const [object, verb, ...rest] = global.operands;
    const kind = object?.value === undefined ? undefined : ipObject(object.value);
    if (kind !== 'netns' && kind !== 'vrf') return undefined;
    if (verb?.value === undefined) return verb === undefined ? undefined : [hidden('its verb is only known at run time')];
    if (!isExec(verb)) return undefined;
    const all = kind === 'netns' && global.options.some((o) => o.name === '-a' || o.name === '-all');
    return command(all ? rest : rest.slice(1), 'ip netns exec without a command');
  }
  // Options ip has that the read-only table leaves out (-batch, -force, -loops, -rcvbuf) or does not know: wherever
  // `netns exec` stands, what follows is judged with and without a namespace name.
  const at = inv.args.findIndex((w, i) => w.value !== undefined && ['netns', 'vrf'].includes(ipObject(w.value) ?? '') && isExec(inv.args[i + 1]));
  if (at === -1) return undefined;
  const rest = inv.args.slice(at + 2);
  return [unknownOption(`${global.why}; what follows netns exec is judged with and without a namespace name`), ...command(rest.slice(1), 'ip netns exec without a command'), ...command(rest, 'ip netns exec without a command')];
}

/**
 * Programs that run another program (or a shell string) through options the classifier does not read: what they run
 * is code it does not follow, so they are asked, except in the forms listed that only show something.
 */
const UNFOLLOWED_RUNNERS: Readonly<Record<string, (args: readonly (string | undefined)[]) => boolean>> = {
  numactl: (a) => a.length > 0 && a.every((v) => ['-H', '--hardware', '-s', '--show'].includes(v ?? '')),
  setpriv: (a) => a.length > 0 && a.every((v) => ['-d', '--dump'].includes(v ?? '')),
  prlimit: (a) => a.length === 0 || a.some((v) => v === '-p' || v?.startsWith('--pid') === true),
  'systemd-inhibit': (a) => a.length === 1 && a[0] === '--list',
  'start-stop-daemon': (a) => a.some((v) => ['-K', '--stop', '-T', '--status'].includes(v ?? '')) && !a.some((v) => ['-S', '--start'].includes(v ?? '')),
  tmux: (a) => ['ls', 'list-sessions', 'list-windows', 'lsw', 'list-panes', 'lsp', 'has-session', 'has'].includes(a[0] ?? ''),
  screen: (a) => a.length > 0 && a.every((v) => ['-ls', '-list', '-q'].includes(v ?? '')),
  script: () => false,
  sg: () => false,
  unbuffer: () => false,
  runcon: () => false,
  cgexec: () => false,
  faketime: () => false,
  torsocks: () => false,
  proxychains: () => false,
  proxychains4: () => false,
  chpst: () => false,
  firejail: () => false,
  capsh: () => false,
  parallel: () => false,
  dtach: () => false,
  daemonize: () => false,
};

function unfollowed(name: string, shows: (args: readonly (string | undefined)[]) => boolean): Unwrapper {
  return (inv) => {
    const args = inv.args.map((w) => w.value);
    if (args.every((v) => v === '--help' || v === '--version' || v === '-V') && args.length > 0) return undefined;
    return shows(args) ? undefined : [hidden(`${name} runs another program through options the classifier does not follow`)];
  };
}

type Unwrapper = (inv: Invocation) => Payload[] | undefined;

const WRAPPERS: ReadonlyMap<string, Unwrapper> = new Map(Object.entries<Unwrapper>({
  pct,
  qm,
  docker,
  podman: docker,
  nerdctl: docker,
  'docker-compose': (inv) => docker({ ...inv, args: [literalWord('compose'), ...inv.args] }),
  'podman-compose': (inv) => docker({ ...inv, args: [literalWord('compose'), ...inv.args] }),
  find,
  ...Object.fromEntries(SHELLS.map((name) => [name, shell])),
  sudo,
  env,
  ssh,
  su, runuser: su,
  timeout: strictWrapper({ short: 'k:s:vfp', long: 'kill-after= signal= verbose foreground preserve-status help version' }, 1, 'timeout without a command'),
  chroot: (inv) => {
    const at = skipOptions(inv.args, { long: ['--userspec', '--groups'] });
    return command(inv.args.slice(at + 1), LOGIN_SHELL('chroot'));
  },
  nsenter: afterOptions({ short: 'tSG', long: ['--target', '--setuid', '--setgid'] }, LOGIN_SHELL('nsenter')),
  unshare: afterOptions({ short: 'SGRw', long: ['--setuid', '--setgid', '--root', '--wd', '--propagation', '--map-user', '--map-group'] }, LOGIN_SHELL('unshare')),
  'systemd-run': afterOptions({ short: 'pEMHu', long: ['--unit', '--property', '--description', '--slice', '--setenv', '--machine', '--host', '--uid', '--gid', '--nice', '--working-directory', '--service-type', '--on-calendar', '--on-active', '--on-boot', '--on-startup', '--on-unit-active', '--on-unit-inactive', '--timer-property', '--path-property', '--socket-property'] }, 'systemd-run without a command'),
  nice: strictOrSelf({ short: 'n:', long: 'adjustment= help version', numeric: true }),
  nohup: strictWrapper({ short: '', long: 'help version' }, 0, 'nohup without a command'),
  ionice: strictOrSelf({ short: 'c:n:p:P:u:tVh', long: 'class= classdata= pid= pgid= uid= ignore help version' }, (o) => o.some((n) => /^(-[pPuhV]|--(pid|pgid|uid|help|version))$/.test(n))),
  stdbuf: strictWrapper({ short: 'i:o:e:', long: 'input= output= error= help version' }, 0, 'stdbuf without a command'),
  xargs,
  time: afterOptions({ short: 'fo', long: ['--format', '--output'] }, 'time without a command'),
  watch,
  strace: commandOrSelf({ short: 'abeEIoOpPsSuUX' }),
  ltrace: commandOrSelf({ short: 'aAeEFlnopsTuwxX' }),
  // exec with no command only changes the shell's redirections (`exec 2>&1`).
  exec: commandOrSelf({ short: 'a' }),
  eval: (inv) => joined(inv.args, 'eval without a command'),
  busybox: commandOrSelf({}),
  doas: afterOptions({ short: 'uC' }, LOGIN_SHELL('doas')),
  setsid: strictWrapper({ short: 'cfwhV', long: 'ctty fork wait help version' }, 0, 'setsid without a command'),
  chrt,
  taskset: (inv) => {
    const reading = readStrict(inv.args, TASKSET, 0, false);
    if (reading.doubt === undefined && reading.options.some((o) => ['-p', '--pid', '-h', '--help', '-V', '--version'].includes(o.name))) return undefined;
    return strictly(inv, TASKSET, 1, 'taskset without a command');
  },
  flock,
  ip,
  ...Object.fromEntries(Object.entries(UNFOLLOWED_RUNNERS).map(([name, shows]) => [name, unfollowed(name, shows)])),
  command: (inv) => (inv.args.some((w) => w.value === '-v' || w.value === '-V') ? undefined : afterOptions({}, 'command without a command')(inv)),
  builtin: afterOptions({}, 'builtin without a command'),
  'lxc-attach': afterOptions({ short: 'nPesuvg', long: ['--name', '--lxcpath', '--elevated-privileges', '--namespaces', '--set-var', '--uid', '--gid'] }, LOGIN_SHELL('lxc-attach')),
}));

/** What a wrapper runs, or undefined when the command is not a wrapper (or, like `env` alone, wraps nothing). */
export function unwrap(inv: Invocation): Payload[] | undefined {
  const wrapper = inv.name === undefined ? undefined : WRAPPERS.get(inv.name);
  return wrapper?.(inv);
}
