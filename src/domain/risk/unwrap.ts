// Wrappers: commands that run another command (pct exec, sudo, bash -c, ssh, timeout, xargs, find -exec, …).
// unwrap says what a wrapper runs so the classifier judges that instead of the wrapper.
import type { Invocation } from './args.ts';
import type { Word } from './parse.ts';
import { literalWord } from './parse.ts';

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
      i += !value.includes('=') && (spec.long ?? []).includes(value) ? 2 : 1;
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

function command(words: readonly Word[], missing: string | Payload): Payload[] {
  if (words.length > 0) return [argv(words)];
  return [typeof missing === 'string' ? unknown(missing) : missing];
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

function env(inv: Invocation): Payload[] | undefined {
  const at = skipOptions(inv.args, { short: 'uCS', long: ['--unset', '--chdir', '--split-string'] });
  const split = inv.args.slice(0, at).findIndex((w) => w.value === '-S' || w.value === '--split-string');
  if (split !== -1) return joined(inv.args.slice(split + 1, split + 2), '-S without a command');
  let i = at;
  while (i < inv.args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(inv.args[i]?.prefix ?? '')) i++;
  // env with no command prints the environment: it is a command of its own, not a wrapper.
  return i < inv.args.length ? [argv(inv.args.slice(i))] : undefined;
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

function find(inv: Invocation): Payload[] | undefined {
  const payloads: Payload[] = [];
  inv.args.forEach((w, i) => {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(w.value ?? '')) return;
    const rest = inv.args.slice(i + 1);
    const end = rest.findIndex((r) => r.value === ';' || r.value === '+');
    payloads.push(...command(end === -1 ? rest : rest.slice(0, end), `find ${w.value ?? ''} without a command`));
  });
  return payloads.length > 0 ? payloads : undefined;
}

function afterOptions(spec: OptionSpec, missing: string | Payload) {
  return (inv: Invocation): Payload[] => command(inv.args.slice(skipOptions(inv.args, spec)), missing);
}

/** Wrappers whose command comes after options and one fixed operand (a duration, a directory, a lock file). */
function afterOperand(spec: OptionSpec, missing: string) {
  return (inv: Invocation): Payload[] => command(inv.args.slice(skipOptions(inv.args, spec) + 1), missing);
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

function xargs(inv: Invocation): Payload[] {
  const at = skipOptions(inv.args, { short: 'adEILlnPs', long: ['--arg-file', '--delimiter', '--eof', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'] });
  const rest = inv.args.slice(at);
  // With no command, xargs runs echo.
  if (rest.length === 0) return [argv([literalWord('echo')])];
  const replace = replaceString(inv.args.slice(0, at));
  if (replace !== undefined && buildsCode(rest, replace)) return [hidden(`the command it runs is built from its input (${replace})`)];
  return [argv(rest)];
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

/** True when input items become the command's name or a shell's script, rather than plain arguments. */
function buildsCode(rest: readonly Word[], replace: string): boolean {
  const [head, ...args] = rest;
  if (head?.value?.includes(replace) === true) return true;
  if (!SHELLS.includes(head?.value?.split('/').pop() ?? '')) return false;
  const dashC = args.findIndex((w) => /^-[^-]*c/.test(w.value ?? ''));
  return dashC !== -1 && args[dashC + 1]?.value?.includes(replace) === true;
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
  timeout: afterOperand({ short: 'sk', long: ['--signal', '--kill-after'] }, 'timeout without a command'),
  chroot: (inv) => {
    const at = skipOptions(inv.args, { long: ['--userspec', '--groups'] });
    return command(inv.args.slice(at + 1), LOGIN_SHELL('chroot'));
  },
  nsenter: afterOptions({ short: 'tSG', long: ['--target', '--setuid', '--setgid'] }, LOGIN_SHELL('nsenter')),
  unshare: afterOptions({ short: 'SGRw', long: ['--setuid', '--setgid', '--root', '--wd', '--propagation', '--map-user', '--map-group'] }, LOGIN_SHELL('unshare')),
  'systemd-run': afterOptions({ short: 'pEMHu', long: ['--unit', '--property', '--description', '--slice', '--setenv', '--machine', '--host', '--uid', '--gid', '--nice', '--working-directory', '--service-type', '--on-calendar', '--on-active', '--on-boot', '--on-startup', '--on-unit-active', '--on-unit-inactive', '--timer-property', '--path-property', '--socket-property'] }, 'systemd-run without a command'),
  nice: commandOrSelf({ short: 'n', long: ['--adjustment'] }),
  nohup: afterOptions({}, 'nohup without a command'),
  ionice: (inv) => (inv.args.some((w) => /^-[^-]*[pPu]|^--(pid|pgid|uid)/.test(w.value ?? '')) ? undefined : afterOptions({ short: 'cn', long: ['--class', '--classdata'] }, 'ionice without a command')(inv)),
  stdbuf: afterOptions({ short: 'ioe', long: ['--input', '--output', '--error'] }, 'stdbuf without a command'),
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
  setsid: afterOptions({}, 'setsid without a command'),
  command: (inv) => (inv.args.some((w) => w.value === '-v' || w.value === '-V') ? undefined : afterOptions({}, 'command without a command')(inv)),
  builtin: afterOptions({}, 'builtin without a command'),
  'lxc-attach': afterOptions({ short: 'nPesuvg', long: ['--name', '--lxcpath', '--elevated-privileges', '--namespaces', '--set-var', '--uid', '--gid'] }, LOGIN_SHELL('lxc-attach')),
}));

/** What a wrapper runs, or undefined when the command is not a wrapper (or, like `env` alone, wraps nothing). */
export function unwrap(inv: Invocation): Payload[] | undefined {
  const wrapper = inv.name === undefined ? undefined : WRAPPERS.get(inv.name);
  return wrapper?.(inv);
}
