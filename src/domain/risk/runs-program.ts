// Options that make an otherwise ordinary tool run a program the command line only names (git's -c and
// --upload-pack, sort's --compress-program, tar's --to-command, ssh's ProxyCommand, …), and programs run by path:
// either way the code that runs is not in the command line, so the classifier cannot read it.
import type { Invocation, Option } from './args.ts';
import { named, options, positionals, values } from './args.ts';
import type { Word } from './parse.ts';

/** Directories whose programs come from packages, so a path there names the same program its name does. */
const SYSTEM_BIN = /^\/(usr\/)?(s?bin|lib|lib64|libexec)\//;

/** A program given by a path outside the system's own directories: a script or binary whose contents are unseen. */
export function programByPath(inv: Invocation): string | undefined {
  const path = inv.path;
  // `sudo X=1 cmd` hands its unwrapped command an assignment first; environment.ts judges those.
  if (path === undefined || !path.includes('/') || SYSTEM_BIN.test(path) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(path)) return undefined;
  return `it runs the program at ${path}, whose contents are not read`;
}

// git -c keys that only change how output looks; every other key may name a program (core.fsmonitor, core.pager,
// core.sshCommand, alias.*, diff.external, filter.*, credential.helper, …) or a repository whose config does.
const GIT_SAFE_CONFIG = /^(color\.[a-z.]+|core\.quotepath)=/i;
const GIT_TOP_VALUED = ['-C', '-c', '--config-env', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--attr-source'];
const GIT_PROGRAM_LONG = ['--upload-pack', '--receive-pack', '--exec', '--extcmd', '--config-env', '--tool'];

/** git's options before the sub-command, each with its value (`-c k=v`, `-ck=v`, `--git-dir=d`, `--git-dir d`). */
function gitTopOptions(inv: Invocation): Option[] {
  const found: Option[] = [];
  const args = inv.args.map((w) => w.value);
  for (let i = 0; i < args.length; i++) {
    const v = args[i];
    if (v === undefined || !v.startsWith('-')) break;
    const eq = v.indexOf('=');
    if (v.startsWith('--') && eq !== -1) found.push({ name: v.slice(0, eq), value: v.slice(eq + 1) });
    else if (GIT_TOP_VALUED.includes(v)) found.push({ name: v, value: args[++i] });
    else if (/^-[cC]./.test(v)) found.push({ name: v.slice(0, 2), value: v.slice(2) });
    else found.push({ name: v, value: undefined });
  }
  return found;
}

function gitProgram(inv: Invocation): string | undefined {
  const top = gitTopOptions(inv);
  const config = top.find((o) => o.name === '-c' && !GIT_SAFE_CONFIG.test(o.value ?? ''));
  if (config !== undefined) return `git -c ${config.value ?? '(only known at run time)'} sets configuration that may run a program`;
  const execPath = top.find((o) => o.name === '--exec-path' && o.value !== undefined);
  if (execPath !== undefined) return `git --exec-path=${execPath.value ?? ''} runs git's helper programs from that directory`;
  const sub = positionals(inv, GIT_TOP_VALUED)[0];
  const all = values(inv);
  const program = all.find((v) => GIT_PROGRAM_LONG.some((l) => v === l || v.startsWith(`${l}=`)));
  if (program !== undefined) return `git ${program.split('=')[0] ?? ''} runs the program it names`;
  const short = (letter: string): boolean => all.some((v) => new RegExp(`^-[^-]*${letter}`).test(v));
  if (['clone', 'ls-remote'].includes(sub ?? '') && short('u')) return `git ${sub ?? ''} -u runs the program it names as the remote's upload-pack`;
  if ((sub === 'rebase' || sub === 'difftool') && short('x')) return `git ${sub} -x runs the command it names`;
  if (sub === 'filter-branch' || (sub === 'bisect' && all.includes('run'))) return `git ${sub} runs the shell commands it is given`;
  return undefined;
}

function sortProgram(inv: Invocation): string | undefined {
  const found = options(inv, 'kotSTz', ['--compress-program', '--key', '--output', '--field-separator', '--buffer-size', '--temporary-directory', '--files0-from', '--parallel', '--random-source', '--sort'])
    .find((o) => o.name.startsWith('--compress') && '--compress-program'.startsWith(o.name));
  return found === undefined ? undefined : `sort --compress-program runs ${found.value ?? 'a program'} on its temporary files`;
}

const TAR_PROGRAM = ['--to-command', '--use-compress-program', '--info-script', '--new-volume-script', '--rsh-command', '--rmt-command'];

function tarProgram(inv: Invocation): string | undefined {
  const all = values(inv);
  const long = all.find((v) => TAR_PROGRAM.some((l) => v === l || v.startsWith(`${l}=`)) || (v.startsWith('--checkpoint-action') && v.includes('exec')));
  if (long !== undefined) return `tar ${long.split('=')[0] ?? ''} runs a program it names`;
  // -I PROG and -F SCRIPT; the first word may be an old-style cluster without a dash (`tar xIf zstd a.tar`).
  const clusters = all.filter((v, i) => /^-[^-]/.test(v) || (i === 0 && /^[A-Za-z]+$/.test(v)));
  return clusters.some((c) => /[IF]/.test(c)) ? 'tar -I or -F runs a program it names' : undefined;
}

function rsyncProgram(inv: Invocation): string | undefined {
  const opts = options(inv, 'eBfMT', ['--rsh', '--rsync-path', '--filter', '--exclude', '--include', '--temp-dir', '--block-size']);
  const rsh = opts.find((o) => (o.name === '-e' || o.name === '--rsh') && o.value !== 'ssh');
  if (rsh !== undefined) return `rsync ${rsh.name} runs ${rsh.value ?? 'a program'} to reach the remote`;
  const path = opts.find((o) => o.name === '--rsync-path');
  return path === undefined ? undefined : `rsync --rsync-path runs ${path.value ?? 'a program'} on the remote`;
}

const SSH_COMMAND_OPTIONS = /^(proxycommand|localcommand|permitlocalcommand|knownhostscommand|remotecommand)\b/i;

const SSH_VALUED = 'BbcDEeFIiJLlmOopQRSWw';

/** ssh's options: before the host and between the host and the remote command, never in the command itself. */
function sshOptions(inv: Invocation): Option[] {
  const ownWords = (args: readonly Word[]): number => {
    let i = 0;
    while (i < args.length) {
      const v = args[i]?.value;
      if (v === undefined || !v.startsWith('-') || v === '--') break;
      i += SSH_VALUED.includes(v.charAt(v.length - 1)) && v.length === 2 ? 2 : 1;
      if (/^-[^-]*$/.test(v) && v.length > 2 && SSH_VALUED.includes(v.charAt(v.length - 1))) i++;
    }
    return i;
  };
  const before = ownWords(inv.args);
  const after = ownWords(inv.args.slice(before + 1));
  const own = [...inv.args.slice(0, before), ...inv.args.slice(before + 1, before + 1 + after)];
  return options({ ...inv, args: own }, SSH_VALUED);
}

function sshProgram(inv: Invocation): string | undefined {
  const opts = sshOptions(inv);
  const command = opts.find((o) => o.name === '-o' && SSH_COMMAND_OPTIONS.test((o.value ?? '').trim()));
  if (command !== undefined) return `${inv.name ?? 'ssh'} -o ${command.value ?? ''} runs a local program`;
  const config = opts.find((o) => o.name === '-F');
  if (config !== undefined) return `${inv.name ?? 'ssh'} -F reads ${config.value ?? 'a configuration file'}, which may name programs to run`;
  const program = named('scp', 'sftp')(inv) ? opts.find((o) => o.name === '-S') : undefined;
  return program === undefined ? undefined : `${inv.name ?? 'scp'} -S runs ${program.value ?? 'a program'} instead of ssh`;
}

function otherProgram(inv: Invocation): string | undefined {
  const all = values(inv);
  if (named('man')(inv) && all.some((v) => /^-[^-]*[PH]/.test(v) || v.startsWith('--pager') || v.startsWith('--html'))) return 'man -P or -H runs the pager or browser it names';
  if (named('zip')(inv) && all.some((v) => v === '-TT' || v.startsWith('--unzip-command'))) return 'zip -TT runs the program it names to test the archive';
  if (named('tcpdump')(inv) && all.some((v) => /^-[^-]*z/.test(v))) return 'tcpdump -z runs the program it names on each saved file';
  if (named('apt', 'apt-get', 'aptitude')(inv)) {
    const hook = options(inv, 'oct', ['--option', '--config-file', '--target-release']).find((o) => (o.name === '-o' || o.name === '--option') && /Invoke|Pre-Install-Pkgs|::Exec|Hook/i.test(o.value ?? ''));
    if (hook !== undefined) return `${inv.name ?? 'apt'} -o ${hook.value ?? ''} sets a hook that runs a shell command`;
  }
  return undefined;
}

/** Why an option of this command runs a program the command line only names, or undefined. */
export function optionRunsProgram(inv: Invocation): string | undefined {
  switch (inv.name) {
    case 'git':
      return gitProgram(inv);
    case 'sort':
      return sortProgram(inv);
    case 'tar':
      return tarProgram(inv);
    case 'rsync':
      return rsyncProgram(inv);
    case 'ssh':
    case 'scp':
    case 'sftp':
      return sshProgram(inv);
    default:
      return otherProgram(inv);
  }
}
