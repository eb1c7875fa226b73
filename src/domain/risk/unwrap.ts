// Wrappers: commands that run another command (pct exec, sudo, bash -c, ssh, timeout, xargs, find -exec, …).
// unwrap says what a wrapper runs so the classifier judges that instead of the wrapper.
import type { Invocation } from './args.ts';
import type { Word } from './parse.ts';
import { literalWord } from './parse.ts';

/** What a wrapper runs: an argv, a shell script to parse, or something unknowable before it runs. */
export type Payload =
  | { readonly kind: 'argv'; readonly argv: readonly Word[] }
  | { readonly kind: 'script'; readonly source: string }
  | { readonly kind: 'unknown'; readonly why: string };

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

function command(words: readonly Word[], missing: string): Payload[] {
  return words.length > 0 ? [argv(words)] : [unknown(missing)];
}

/** The words as one script, as ssh and watch hand them to a shell joined by spaces. */
function joined(words: readonly Word[], missing: string): Payload[] {
  if (words.length === 0) return [unknown(missing)];
  const parts = words.map((w) => w.value);
  if (parts.some((p) => p === undefined)) return [unknown('its command is only known at run time')];
  return [{ kind: 'script', source: parts.join(' ') }];
}

function optionsOf(args: readonly Word[], end: number): string[] {
  return args.slice(0, end).flatMap((w) => (w.value === undefined ? [] : [w.value]));
}

function shell(inv: Invocation): Payload[] {
  const { args } = inv;
  let i = 0;
  let dashC = false;
  for (; i < args.length; i++) {
    const value = args[i]?.value;
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
    if (/[oO]$/.test(value)) i++;
  }
  const script = args[i];
  if (dashC) {
    if (script === undefined) return [unknown('-c without a command')];
    return script.value === undefined ? [unknown('its script is only known at run time')] : [{ kind: 'script', source: script.value }];
  }
  if (script !== undefined) return [unknown(`it runs the script file ${script.text}`)];
  const heredoc = inv.redirects.find((r) => r.heredoc !== undefined)?.heredoc;
  if (heredoc?.value !== undefined) return [{ kind: 'script', source: heredoc.value }];
  return [unknown('it runs commands read from its input')];
}

function ssh(inv: Invocation): Payload[] {
  const spec = { short: 'BbcDEeFIiJLlmOopQRSWw' };
  const hostAt = skipOptions(inv.args, spec);
  const commandAt = skipOptions(inv.args, spec, hostAt + 1);
  const options = [...optionsOf(inv.args, hostAt), ...optionsOf(inv.args.slice(hostAt + 1), commandAt - hostAt - 1)];
  if (options.some((o) => /^-[^-]*N/.test(o))) return [unknown('it only opens a tunnel')];
  return joined(inv.args.slice(commandAt), 'without a command it opens an interactive session');
}

function sudo(inv: Invocation): Payload[] {
  const at = skipOptions(inv.args, { short: 'CDghpRrtTUu', long: ['--user', '--group', '--chdir', '--host', '--prompt', '--role', '--type', '--close-from', '--command-timeout', '--other-user'] });
  if (optionsOf(inv.args, at).some((o) => o === '--edit' || /^-[^-]*e/.test(o))) return [unknown('sudo -e edits files')];
  return command(inv.args.slice(at), 'without a command sudo opens a shell or changes its own state');
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

function afterOptions(spec: OptionSpec, missing: string) {
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
  if (script === -1) return [unknown('without -c it opens a shell')];
  return joined(inv.args.slice(script + 1, script + 2), '-c without a command');
}

function watch(inv: Invocation): Payload[] {
  const at = skipOptions(inv.args, { short: 'nq', long: ['--interval', '--equexit'] });
  const rest = inv.args.slice(at);
  const exec = optionsOf(inv.args, at).some((o) => o === '--exec' || /^-[^-]*x/.test(o));
  return exec ? command(rest, 'watch without a command') : joined(rest, 'watch without a command');
}

function xargs(inv: Invocation): Payload[] {
  const at = skipOptions(inv.args, { short: 'adEILlnPs', long: ['--arg-file', '--delimiter', '--eof', '--replace', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'] });
  const rest = inv.args.slice(at);
  // With no command, xargs runs echo.
  return [argv(rest.length > 0 ? rest : [literalWord('echo')])];
}

type Unwrapper = (inv: Invocation) => Payload[] | undefined;

const WRAPPERS: ReadonlyMap<string, Unwrapper> = new Map(Object.entries<Unwrapper>({
  pct,
  qm,
  docker,
  'docker-compose': (inv) => docker({ ...inv, args: [literalWord('compose'), ...inv.args] }),
  find,
  bash: shell, sh: shell, dash: shell, zsh: shell, ksh: shell, ash: shell,
  sudo,
  env,
  ssh,
  su, runuser: su,
  timeout: afterOperand({ short: 'sk', long: ['--signal', '--kill-after'] }, 'timeout without a command'),
  chroot: afterOperand({ long: ['--userspec', '--groups'] }, 'without a command chroot opens a shell'),
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
  doas: afterOptions({ short: 'uC' }, 'without a command doas opens a shell'),
  setsid: afterOptions({}, 'setsid without a command'),
  command: (inv) => (inv.args.some((w) => w.value === '-v' || w.value === '-V') ? undefined : afterOptions({}, 'command without a command')(inv)),
  builtin: afterOptions({}, 'builtin without a command'),
  'lxc-attach': afterOptions({ short: 'nPesuvg', long: ['--name', '--lxcpath', '--elevated-privileges', '--namespaces', '--set-var', '--uid', '--gid'] }, 'without a command lxc-attach opens a shell'),
}));

/** What a wrapper runs, or undefined when the command is not a wrapper (or, like `env` alone, wraps nothing). */
export function unwrap(inv: Invocation): Payload[] | undefined {
  const wrapper = inv.name === undefined ? undefined : WRAPPERS.get(inv.name);
  return wrapper?.(inv);
}
