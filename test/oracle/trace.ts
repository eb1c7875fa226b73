// What each command of a sandbox batch did, read from the batch's strace output: the programs it executed, every
// change to files it attempted (succeeded or refused), every change to the system it attempted (mounts, signals to
// processes not its own, route and link requests, the host name, the clock, reboot, modules), and every file it
// opened. A process belongs to the command in whose window it first appears: from the command's `sh -c` starting to
// the driver killing what is left before the next one (test/fixtures/oracle/driver.sh); the driver's own work between
// commands (resetting the scratch, starting `timeout`) belongs to none.
import { posix } from 'node:path';
import type { SyscallRecord } from './strace-lines.ts';
import { annotatedPath, leadingNumber, stringArg, stringArray, syscallRecords } from './strace-lines.ts';

export interface Exec {
  readonly pid: number;
  /** The program's path as executed, made absolute against the working directory. */
  readonly path: string;
  readonly argv: readonly string[];
}

export interface FileChange {
  readonly pid: number;
  readonly syscall: string;
  /** The path it names, made absolute (symbolic links are not followed). */
  readonly path: string;
  /** Where an open that succeeded actually landed, when strace could tell (symbolic links followed). */
  readonly actual: string | undefined;
  /** The error when the kernel refused it; a refused change still counts as attempted. */
  readonly errno: string | undefined;
}

export interface SystemChange {
  readonly pid: number;
  readonly syscall: string;
  readonly what: string;
  readonly errno: string | undefined;
}

export interface Opened {
  readonly path: string;
  readonly actual: string | undefined;
}

export interface CommandTrace {
  readonly command: string;
  /** False when the trace holds no start of this command (the batch died before it). */
  readonly started: boolean;
  /** Programs executed after the command's own `sh -c` started (that shell's start is not among them). */
  readonly execs: readonly Exec[];
  readonly fileChanges: readonly FileChange[];
  readonly systemChanges: readonly SystemChange[];
  readonly opened: readonly Opened[];
}

/** Where the driver starts every command, and so the working directory of a process not yet seen elsewhere. */
const START_DIR = '/scratch';
const AT_FDCWD = -100;
const O_ACCMODE = 0o3;
const O_CREAT = 0o100;
const O_TRUNC = 0o1000;
const O_TMPFILE = 0o20200000;

const DRIVER = '/oracle/driver.sh';

interface Building {
  command: string;
  started: boolean;
  execs: Exec[];
  fileChanges: FileChange[];
  systemChanges: SystemChange[];
  opened: Opened[];
  /** PIDs of the command's processes as seen inside the sandbox (what its signals name). */
  insidePids: Set<number>;
  runnerPid: number | undefined;
}

const sameArgv = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((v, i) => v === b[i]);
const ok = (r: SyscallRecord): boolean => r.errno === undefined && r.ret !== '?';

/** Each command's trace, in the order given (the order the batch ran them). */
export function commandTraces(trace: string, commands: readonly string[]): CommandTrace[] {
  const built: Building[] = commands.map((command) => ({ command, started: false, execs: [], fileChanges: [], systemChanges: [], opened: [], insidePids: new Set(), runnerPid: undefined }));
  const owner = new Map<number, Building>();
  const seen = new Set<number>();
  const cwd = new Map<number, string>();
  let driver: number | undefined;
  let next = 0;
  let awaiting: { command: Building; timeoutPid: number } | undefined;
  let open: Building | undefined;

  for (const r of syscallRecords(trace)) {
    const firstSight = !seen.has(r.pid);
    seen.add(r.pid);
    const execArgv = r.name === 'execve' && ok(r) ? stringArray(r.args[1]) : undefined;
    if (driver === undefined) {
      if (execArgv?.[1] === DRIVER) driver = r.pid;
      continue;
    }
    if (r.pid === driver) {
      if (r.name === 'kill' && r.args[0] === '-1') open = undefined;
      continue;
    }
    if (execArgv !== undefined && !owner.has(r.pid)) {
      const command = built[next];
      if (command !== undefined && posix.basename(execArgv[0] ?? '') === 'timeout' && sameArgv(execArgv.slice(4), ['sh', '-c', command.command])) {
        awaiting = { command, timeoutPid: r.pid };
        next++;
        continue;
      }
      if (awaiting !== undefined && sameArgv(execArgv, ['sh', '-c', awaiting.command.command])) {
        open = awaiting.command;
        open.started = true;
        open.runnerPid = r.pid;
        owner.set(r.pid, open);
        cwd.set(r.pid, START_DIR);
        awaiting = undefined;
        continue;
      }
    }
    if (awaiting !== undefined && r.pid === awaiting.timeoutPid && isFork(r.name)) {
      const child = leadingNumber(r.ret);
      if (child !== undefined && child > 0) awaiting.command.insidePids.add(child);
      continue;
    }
    if (firstSight && open !== undefined && !owner.has(r.pid)) owner.set(r.pid, open);
    const command = owner.get(r.pid);
    if (command !== undefined) interpret(r, command, cwd);
  }
  return built.map(({ command, started, execs, fileChanges, systemChanges, opened }) => ({ command, started, execs, fileChanges, systemChanges, opened }));
}

const isFork = (name: string): boolean => name === 'clone' || name === 'clone3' || name === 'fork' || name === 'vfork';

function interpret(r: SyscallRecord, command: Building, cwds: Map<number, string>): void {
  const pid = r.pid;
  // strace prints the working directory beside AT_FDCWD: the freshest word on where this process stands.
  for (const arg of r.args) {
    if (leadingNumber(arg) === AT_FDCWD) {
      const dir = annotatedPath(arg);
      if (dir !== undefined) cwds.set(pid, dir);
    }
  }
  const cwd = cwds.get(pid) ?? cwds.get(command.runnerPid ?? -1) ?? START_DIR;
  const plain = (arg: string | undefined): string | undefined => {
    const path = stringArg(arg);
    return path === undefined ? undefined : posix.normalize(posix.isAbsolute(path) ? path : posix.join(cwd, path));
  };
  const at = (dirArg: string | undefined, pathArg: string | undefined): string | undefined => {
    const path = stringArg(pathArg);
    if (path === undefined || path === '') return annotatedPath(dirArg);
    if (posix.isAbsolute(path)) return posix.normalize(path);
    const dir = annotatedPath(dirArg) ?? (leadingNumber(dirArg) === AT_FDCWD ? cwd : undefined);
    return posix.normalize(posix.join(dir ?? `${cwd}/<fd ${dirArg ?? '?'}>`, path));
  };
  const file = (path: string | undefined, actual?: string): void => {
    if (path !== undefined) command.fileChanges.push({ pid, syscall: r.name, path, actual, errno: r.errno });
  };
  const system = (what: string): void => {
    command.systemChanges.push({ pid, syscall: r.name, what, errno: r.errno });
  };
  const [a0, a1, a2, a3] = r.args;

  switch (r.name) {
    case 'execve':
    case 'execveat': {
      if (!ok(r)) return;
      const path = r.name === 'execve' ? plain(a0) : at(a0, a1);
      if (path !== undefined) command.execs.push({ pid, path, argv: stringArray(r.name === 'execve' ? a1 : a2) });
      return;
    }
    case 'clone':
    case 'clone3':
    case 'fork':
    case 'vfork': {
      const child = leadingNumber(r.ret);
      if (child !== undefined && child > 0) command.insidePids.add(child);
      return;
    }
    case 'chdir':
      if (ok(r)) {
        const dir = plain(a0);
        if (dir !== undefined) cwds.set(pid, dir);
      }
      return;
    case 'fchdir':
      if (ok(r)) {
        const dir = annotatedPath(a0);
        if (dir !== undefined) cwds.set(pid, dir);
      }
      return;
    case 'open':
    case 'creat':
    case 'openat':
    case 'openat2': {
      const path = r.name === 'open' || r.name === 'creat' ? plain(a0) : at(a0, a1);
      if (path === undefined) return;
      const actual = ok(r) ? annotatedPath(r.ret) : undefined;
      command.opened.push({ path, actual });
      const flags = r.name === 'creat' ? O_CREAT | O_TRUNC | 1 : openFlags(r.name === 'open' ? a1 : r.name === 'openat' ? a2 : a2?.replace(/^\{flags=/, ''));
      // An O_TMPFILE file has no name and is gone when closed; only linking it somewhere (linkat, traced) keeps it.
      if ((flags & O_TMPFILE) === O_TMPFILE) return;
      if ((flags & O_ACCMODE) !== 0 || (flags & (O_CREAT | O_TRUNC)) !== 0) file(path, actual);
      return;
    }
    case 'unlink':
    case 'rmdir':
    case 'mkdir':
    case 'mknod':
    case 'chmod':
    case 'chown':
    case 'lchown':
    case 'truncate':
    case 'utime':
    case 'utimes':
    case 'setxattr':
    case 'lsetxattr':
    case 'removexattr':
    case 'lremovexattr':
      file(plain(a0));
      return;
    case 'unlinkat':
    case 'mkdirat':
    case 'mknodat':
    case 'fchmodat':
    case 'fchownat':
    case 'futimesat':
    case 'utimensat':
      file(at(a0, a1));
      return;
    case 'fchmod':
    case 'fchown':
    case 'ftruncate':
    case 'fsetxattr':
    case 'fremovexattr':
      file(annotatedPath(a0));
      return;
    case 'rename':
      file(plain(a0));
      file(plain(a1));
      return;
    case 'link':
      file(plain(a1));
      return;
    case 'symlink':
      file(plain(a1));
      return;
    case 'renameat':
    case 'renameat2':
      file(at(a0, a1));
      file(at(a2, a3));
      return;
    case 'linkat':
      file(at(a2, a3));
      return;
    case 'symlinkat':
      file(at(a1, a2));
      return;
    case 'mount':
      system(`mount ${stringArg(a0) ?? a0 ?? ''} on ${plain(a1) ?? a1 ?? ''}`);
      return;
    case 'umount2':
    case 'swapon':
    case 'swapoff':
    case 'acct':
      system(`${r.name} ${plain(a0) ?? a0 ?? ''}`);
      return;
    case 'sethostname':
    case 'setdomainname':
      system(`${r.name} ${stringArg(a0) ?? ''}`);
      return;
    case 'pivot_root':
    case 'reboot':
    case 'settimeofday':
    case 'clock_settime':
    case 'init_module':
    case 'finit_module':
    case 'delete_module':
    case 'kexec_load':
    case 'kexec_file_load':
      system(`${r.name}(${r.args.join(', ').slice(0, 120)})`);
      return;
    case 'kill':
    case 'tkill':
    case 'rt_sigqueueinfo':
      signal(command, leadingNumber(a0), leadingNumber(a1), system);
      return;
    case 'tgkill':
      signal(command, leadingNumber(a0), leadingNumber(a2), system);
      return;
    case 'pidfd_send_signal':
      if (leadingNumber(a1) !== 0) system(`signal ${a1 ?? '?'} through a pidfd`);
      return;
    case 'sendto':
    case 'sendmsg': {
      const request = netlinkChange(r.args.join(', '));
      if (request !== undefined) system(request);
      return;
    }
    default:
      return;
  }
}

function openFlags(text: string | undefined): number {
  const match = /^(0x[0-9a-f]+|\d+)/i.exec(text ?? '');
  return match === null ? 0 : Number(match[1]);
}

/** A signal is a change to the system unless it probes (signal 0) or goes to one of the command's own processes. */
function signal(command: Building, target: number | undefined, sig: number | undefined, system: (what: string) => void): void {
  if (sig === 0 || target === undefined) return;
  const own = target > 0 ? command.insidePids.has(target) : target < -1 && command.insidePids.has(-target);
  if (!own) system(`signal ${String(sig)} to ${target === -1 ? 'every process' : target === 0 ? 'its process group' : target < 0 ? `process group ${String(-target)}` : `PID ${String(target)}`}`);
}

// rtnetlink message types run from 16 in fours: NEW, DEL, GET, SET (RTM_NEWLINK, RTM_DELLINK, RTM_GETLINK, RTM_SETLINK).
const RTM_BASE = 16;
const RTM_LAST = 127;
const NLM_F_DUMP = 0x300;

/**
 * A netlink request that changes a link, address, route, neighbour or rule (`ip link set … down`, `ip addr add`), as
 * `what`; undefined for queries. A dump request (NLM_F_DUMP) only reads whatever its type: that is how `ss` asks
 * sock_diag, whose request type equals RTM_NEWADDR's. A request whose body is all zeros names nothing to change: `ip`
 * sends one as a probe when it starts.
 */
function netlinkChange(text: string): string | undefined {
  const messages = /\{nlmsg_len=\d+, nlmsg_type=(0x[0-9a-f]+|\d+), nlmsg_flags=(0x[0-9a-f]+|\d+)[^}]*\}(?:, "((?:[^"\\]|\\.)*)")?/gi;
  for (const match of text.matchAll(messages)) {
    const type = Number(match[1]);
    const flags = Number(match[2]);
    if (type < RTM_BASE || type > RTM_LAST || (type - RTM_BASE) % 4 === 2 || (flags & NLM_F_DUMP) === NLM_F_DUMP) continue;
    if (match[3] !== undefined && /^(\\x00)*$/.test(match[3])) continue;
    return `netlink request type 0x${type.toString(16)} (${['new', 'delete', 'get', 'set'][(type - RTM_BASE) % 4] ?? '?'}) flags 0x${flags.toString(16)}`;
  }
  return undefined;
}
