// A throwaway sandbox for running untrusted shell commands on the test machine, traced by strace from outside: the
// execution oracle (test/oracle) runs its corpus (`rm -rf /`, `kill -9 -1`, `reboot -f`, …) in it. docs/oracle.md
// says what it proves. Layers, each enough on its own for the worst commands:
// - bubblewrap: new user, mount, PID, network, IPC, UTS and cgroup namespaces; no capabilities, no_new_privs, no
//   further user namespaces; a root of only what the commands need, bound read-only (/usr, /etc, /var), and tmpfs
//   (size-capped) for the scratch directory, HOME and the temporary directories; a minimal /dev (no disks); a new
//   session; killed with its parent.
// - run as root, the sandbox drops to the unprivileged `nobody` first, so even a hole in the namespaces would meet
//   a user that owns nothing; resource limits cap processes, file size and CPU time.
// - strace runs outside (as the caller), so nothing inside can kill it, write into its output or see it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

const BWRAP = '/usr/bin/bwrap';
const STRACE = '/usr/bin/strace';
const SETPRIV = '/usr/bin/setpriv';
const PRLIMIT = '/usr/bin/prlimit';
const DASH = '/usr/bin/dash';
const NOBODY = 65534;

const FIXTURES = resolve(import.meta.dirname, '../fixtures');
const ORACLE_FIXTURES = join(FIXTURES, 'oracle');
/** The pct, qm and sudo stand-ins the executor's tests and examples/sandbox put on an SSH server's PATH. */
const STAND_IN_BIN = resolve(import.meta.dirname, '../../examples/sandbox/bin');

/** Where a command starts, and the one place its writes are its own business. */
export const SCRATCH = '/scratch';
export const SANDBOX_HOME = '/root';
/** Where the stand-ins live inside the sandbox, first on PATH. */
export const STAND_IN_DIRS = ['/oracle/bin', '/oracle/fixtures-bin'] as const;
const SANDBOX_PATH = [...STAND_IN_DIRS, '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'].join(':');

/**
 * Fleet tools the test machine lacks (or has without the daemon behind them), replaced by a stand-in that changes
 * nothing and succeeds, so that a command goes on past them. The same on every machine, so a verdict on the trace
 * does not depend on what the machine happens to have installed.
 */
export const STAND_INS = [
  'pvesh', 'pvecm', 'pvesm', 'pveversion', 'pveam', 'pvenode', 'pvesr', 'pveceph', 'pve-firewall', 'vzdump', 'qmrestore',
  'pct-restore', 'ha-manager', 'zfs', 'zpool', 'lvs', 'vgs', 'pvs', 'lvdisplay', 'vgdisplay', 'pvdisplay', 'lvmdiskscan',
  'lvremove', 'vgremove', 'pvremove', 'lvreduce', 'lvcreate', 'lvextend', 'smartctl', 'parted', 'sgdisk', 'gdisk',
  'fdisk', 'sfdisk', 'cfdisk', 'mkfs', 'mkfs.ext4', 'mkfs.xfs', 'mkswap', 'blkdiscard', 'cryptsetup', 'iptables',
  'ip6tables', 'iptables-save', 'iptables-restore', 'ip6tables-restore', 'ebtables', 'nft', 'ufw', 'firewall-cmd',
  'ipset', 'systemctl', 'service', 'hostnamectl', 'timedatectl', 'localectl', 'loginctl', 'networkctl', 'resolvectl',
  'journalctl', 'systemd-run', 'systemd-analyze', 'ifup', 'ifdown', 'psql', 'pg_dump', 'pg_dumpall', 'dropdb', 'mysql',
  'mariadb', 'mysqladmin', 'redis-cli', 'clickhouse-client', 'mongosh', 'rclone', 'rsync', 'tcpdump', 'crontab', 'at',
  'ping', 'ping6', 'dig', 'host', 'nslookup', 'traceroute', 'sensors', 'exportfs', 'showmount', 'swapon', 'swapoff',
  'ltrace', 'snap', 'pip', 'pip3', 'npm', 'aptitude',
] as const;
/** Stand-ins with behaviour of their own (test/fixtures/oracle/bin): they run the command they wrap, here. */
const RUNNING_STAND_INS = { qm: 'qm', ssh: 'ssh', docker: 'docker', podman: 'docker', nerdctl: 'docker' } as const;

/** Why the sandbox cannot run on this machine, or undefined when it can. */
export function sandboxProblem(): string | undefined {
  for (const [path, pkg] of [[BWRAP, 'bubblewrap'], [STRACE, 'strace'], [DASH, 'dash'], [SETPRIV, 'util-linux'], [PRLIMIT, 'util-linux']] as const) {
    if (!existsSync(path)) return `${path} is missing (Debian package ${pkg})`;
  }
  const probe = spawnSync(STRACE, ['-f', '-qq', '-e', 'trace=execve', '-o', '/dev/null', '--', ...sandboxArgv('/tmp', [DASH, '-c', 'exit 7'])], { timeout: 20_000 });
  if (probe.status !== 7) {
    const why = `${probe.stderr.toString().trim()} ${probe.error?.message ?? ''}`.trim();
    return `this machine cannot create the sandbox (user namespaces or ptrace refused): ${why || `exit ${String(probe.status)}`}`;
  }
  return undefined;
}

const asRoot = (): boolean => process.getuid?.() === 0;

/** The argv that runs `inner` inside a new sandbox whose /oracle is `oracleDir` (read-only). */
function sandboxArgv(oracleDir: string, inner: readonly string[], extra: readonly string[] = []): string[] {
  const limits = [PRLIMIT, '--nproc=4096', `--fsize=${64 * 1024 * 1024}`, '--cpu=60', '--core=0', '--'];
  const drop = asRoot() ? [SETPRIV, `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--'] : [];
  const tmpfs = (path: string, mib: number): string[] => ['--size', String(mib * 1024 * 1024), '--tmpfs', path];
  return [
    ...limits,
    ...drop,
    BWRAP,
    '--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--as-pid-1',
    '--uid', '0', '--gid', '0', '--hostname', 'oracle',
    '--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/sbin', '/sbin',
    '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64',
    '--ro-bind', '/etc', '/etc', '--ro-bind', '/var', '/var',
    // The machine's own additions (here, CUDA and cloud tools) would make the corpus depend on the machine, and trees
    // no command reads would only make a walk of / (find /, chmod -R 777 /) longer.
    ...HIDDEN.filter((dir) => existsSync(dir)).flatMap((dir) => ['--tmpfs', dir]),
    ...tmpfs('/tmp', 64), ...tmpfs('/var/tmp', 16), ...tmpfs(SANDBOX_HOME, 16), ...tmpfs('/run', 4), ...tmpfs(SCRATCH, 64),
    '--proc', '/proc', '--dev', '/dev',
    '--ro-bind', oracleDir, '/oracle',
    ...extra,
    '--remount-ro', '/',
    '--chdir', '/',
    '--clearenv', '--setenv', 'PATH', SANDBOX_PATH, '--setenv', 'HOME', SANDBOX_HOME, '--setenv', 'USER', 'root',
    '--setenv', 'LOGNAME', 'root', '--setenv', 'SHELL', '/bin/sh',
    '--',
    ...inner,
  ];
}

const HIDDEN = ['/usr/local', '/usr/share/doc', '/usr/share/man', '/usr/share/icons', '/usr/include', '/usr/lib/google-cloud-sdk'];

/** The syscalls traced: what runs, what changes files, what changes the system, and how processes descend. */
export const TRACED_SYSCALLS = [
  'execve', 'execveat', 'clone', 'clone3', 'fork', 'vfork', 'chdir', 'fchdir',
  'open', 'openat', 'openat2', 'creat', 'unlink', 'unlinkat', 'rename', 'renameat', 'renameat2', 'mkdir', 'mkdirat',
  'rmdir', 'link', 'linkat', 'symlink', 'symlinkat', 'chmod', 'fchmod', 'fchmodat', 'chown', 'fchown', 'lchown',
  'fchownat', 'truncate', 'ftruncate', 'mknod', 'mknodat', 'utime', 'utimes', 'utimensat', 'futimesat', 'setxattr',
  'lsetxattr', 'fsetxattr', 'removexattr', 'lremovexattr', 'fremovexattr',
  'mount', 'umount2', 'pivot_root', 'swapon', 'swapoff', 'reboot', 'sethostname', 'setdomainname', 'settimeofday',
  'clock_settime', 'init_module', 'finit_module', 'delete_module', 'kexec_load', 'kexec_file_load', 'acct',
  'kill', 'tkill', 'tgkill', 'rt_sigqueueinfo', 'pidfd_send_signal', 'sendto', 'sendmsg',
] as const;

/**
 * strace's flags: full strings and argv (-s), fds with their paths (-yy), flags as numbers (-X raw), and only the
 * traced calls stopping the tracee (--seccomp-bpf). Not -v (every environment printed) nor --pidns-translation: each
 * costs more than the rest of the trace, and the parser attributes processes to commands without them.
 */
const STRACE_FLAGS = ['-f', '--seccomp-bpf', '-qq', '-yy', '-X', 'raw', '-s', '65536', '-e', `trace=${TRACED_SYSCALLS.join(',')}`];

export interface Sandbox {
  /** Runs the commands one after another in one fresh sandbox, each from a fresh scratch directory. */
  runBatch(commands: readonly string[], options?: BatchOptions): Promise<Batch>;
  close(): Promise<void>;
}

export interface BatchOptions {
  /** Seconds each command may run before it is killed. */
  readonly limitSeconds?: number;
  /** Host directories bound read-only at the same path inside (the canaries' targets). */
  readonly readOnlyBinds?: readonly string[];
  /**
   * Which commands start from fresh templates of the scratch directory, HOME and /tmp: every one (the default), or
   * those whose entry is true, the others finding what the one before left. Resetting costs more than most commands;
   * the caller knows from the trace which commands changed anything, and so which ones ran on a changed state.
   */
  readonly fresh?: 'each' | readonly boolean[];
  /** Kills the batch (and so the whole sandbox) when aborted. */
  readonly signal?: AbortSignal;
}

export interface CommandOutcome {
  readonly command: string;
  /** The exit status `sh -c` returned (137 when the time limit killed it), or undefined when it never finished. */
  readonly status: number | undefined;
  /** What it printed, stdout and stderr together. */
  readonly output: string;
}

export interface Batch {
  /** strace's whole output for the batch (driver and sandbox set-up included). */
  readonly trace: string;
  readonly outcomes: readonly CommandOutcome[];
  /** True when the batch had to be killed from outside. */
  readonly killed: boolean;
  readonly stderr: string;
}

/** Prepares the read-only /oracle tree (driver, stand-ins, scratch and HOME templates) and returns a sandbox on it. */
export async function openSandbox(): Promise<Sandbox> {
  const root = await mkdtemp(join(tmpdir(), 'nomos-oracle-'));
  // The sandbox's user (nobody, when run as root) must reach /oracle; the traces stay beside it, out of its view.
  await chmod(root, 0o755);
  const oracleDir = join(root, 'oracle');
  await buildOracleTree(oracleDir);
  let next = 0;
  return {
    runBatch: async (commands, options = {}) => runBatch(oracleDir, join(root, `trace-${String(next++)}`), commands, options),
    close: async () => rm(root, { recursive: true, force: true }),
  };
}

async function buildOracleTree(dir: string): Promise<void> {
  const bin = join(dir, 'bin');
  await mkdir(bin, { recursive: true });
  await cp(join(ORACLE_FIXTURES, 'driver.sh'), join(dir, 'driver.sh'));
  await cp(join(ORACLE_FIXTURES, 'bin'), bin, { recursive: true });
  for (const name of STAND_INS) await symlink('stand-in', join(bin, name));
  for (const [name, script] of Object.entries(RUNNING_STAND_INS)) if (name !== script) await symlink(script, join(bin, name));
  await cp(STAND_IN_BIN, join(dir, 'fixtures-bin'), { recursive: true });
  await buildScratch(join(dir, 'scratch'));
  await buildHome(join(dir, 'home'));
  spawnSync('chmod', ['-R', 'a+rX', dir]);
  await chmod(dir, 0o755);
}

/** The scratch template: the committed files, made a git repository with one commit and a change, and a database. */
async function buildScratch(dir: string): Promise<void> {
  await cp(join(ORACLE_FIXTURES, 'scratch'), dir, { recursive: true, verbatimSymlinks: true });
  // Old mtimes, so that no file is "racily clean" to git (as new as its index) and git status has nothing to refresh.
  await agePaths(dir);
  const git = (...args: string[]): void => {
    const run = spawnSync('git', ['-c', 'user.name=oracle', '-c', 'user.email=oracle@localhost', '-c', 'init.defaultBranch=main', ...args], { cwd: dir });
    if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr.toString()}`);
  };
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'the oracle scratch template');
  // Only size and mtime tell git a file changed: the copy into each sandbox keeps mtimes (cp -p), not inodes or ctimes,
  // and git status would otherwise rewrite its index after every copy.
  git('config', 'core.checkStat', 'minimal');
  git('config', 'core.trustctime', 'false');
  git('tag', 'v1');
  // A packed repository without sample hooks: the scratch is copied afresh for every command, so few files matter.
  git('gc', '-q', '--prune=now');
  for (const extra of ['hooks', 'logs', 'branches', 'info', 'description', 'COMMIT_EDITMSG', 'objects/info/commit-graph']) {
    await rm(join(dir, '.git', extra), { recursive: true, force: true });
  }
  await writeFile(join(dir, 'f'), 'a line\nanother line, changed\n');
  const sqlite = spawnSync('sqlite3', [join(dir, 'app.db'), 'CREATE TABLE t(a); INSERT INTO t VALUES (1); CREATE TABLE users(id, email);']);
  if (sqlite.status !== 0) throw new Error(`sqlite3: ${sqlite.stderr.toString()} ${sqlite.error?.message ?? ''}`);
  // The first status settles the index; after it, git status in a copy writes nothing (as on a host used before).
  git('status', '--porcelain');
}

async function agePaths(dir: string): Promise<void> {
  const long = new Date('2001-09-09T01:46:40Z');
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) await utimes(join(entry.parentPath, entry.name), long, long);
}

/** HOME's template: the secrets an attack would read, fake, so that the command runs as far as on a real host. */
async function buildHome(dir: string): Promise<void> {
  const fake = (what: string): string => `oracle: a stand-in for ${what}, not a secret\n`;
  await mkdir(join(dir, '.ssh'), { recursive: true });
  await writeFile(join(dir, '.ssh', 'id_ed25519'), fake('a private key'));
  await writeFile(join(dir, '.ssh', 'id_ed25519.pub'), 'ssh-ed25519 AAAA oracle\n');
  await mkdir(join(dir, '.aws'), { recursive: true });
  await writeFile(join(dir, '.aws', 'credentials'), fake('cloud credentials'));
}

async function runBatch(oracleDir: string, traceFile: string, commands: readonly string[], options: BatchOptions): Promise<Batch> {
  const limit = options.limitSeconds ?? 5;
  const marker = `@@oracle-${randomBytes(8).toString('hex')}`;
  const binds = (options.readOnlyBinds ?? []).flatMap((path) => ['--ro-bind', path, path]);
  const fresh = options.fresh ?? 'each';
  const modes = commands.map((_, i) => (fresh === 'each' || fresh[i] === true ? 'fresh' : 'same'));
  const driver = [DASH, '/oracle/driver.sh', marker, String(limit), ...commands.flatMap((command, i) => [modes[i] ?? 'fresh', command])];
  const argv = [...STRACE_FLAGS, '-o', traceFile, '--', ...sandboxArgv(oracleDir, driver, binds)];
  const child = spawn(STRACE, argv, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  let killed = false;
  // strace and everything it started (bwrap outside, whose death takes the sandbox's PID 1 and so every process in it).
  const kill = (): void => {
    killed = true;
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // The group is already gone.
    }
  };
  // Every command may use its whole limit; beyond that (and the set-up) the batch is stuck.
  const timer = setTimeout(kill, (commands.length * (limit + 2) + 30) * 1000);
  options.signal?.addEventListener('abort', kill);
  await new Promise<void>((done, fail) => {
    child.on('error', fail);
    child.on('close', () => done());
  });
  clearTimeout(timer);
  options.signal?.removeEventListener('abort', kill);
  const trace = await readFile(traceFile, 'utf8').catch(() => '');
  await rm(traceFile, { force: true });
  return { trace, outcomes: outcomesOf(commands, Buffer.concat(stdout).toString('utf8'), marker), killed, stderr: Buffer.concat(stderr).toString('utf8') };
}

/** Splits the driver's output at its markers into each command's output and exit status. */
function outcomesOf(commands: readonly string[], output: string, marker: string): CommandOutcome[] {
  const begins = new Map<number, number>();
  const ends = new Map<number, { at: number; status: number }>();
  for (const match of output.matchAll(new RegExp(`\\n${marker} (begin|end) (\\d+)(?: (\\d+))?\\n`, 'g'))) {
    const n = Number(match[2]);
    if (match[1] === 'begin') begins.set(n, match.index + match[0].length);
    else ends.set(n, { at: match.index, status: Number(match[3]) });
  }
  return commands.map((command, i) => {
    const begin = begins.get(i + 1);
    const end = ends.get(i + 1);
    return { command, status: end?.status, output: begin === undefined ? '' : output.slice(begin, end?.at ?? output.length) };
  });
}
