// Proofs that the sandbox holds, each checked from outside it: the corpus runs `rm -rf`, `kill -9 -1`, `reboot -f`,
// `ip link set … down`, writes to devices and `chmod -R 777 /`, so before it runs, these run the same kinds of command
// against things the test machine can watch and show that nothing outside changed. Every canary is harmless should
// the sandbox fail anyway (its targets are a temporary directory and a process this module started; the sysrq letter
// is `s`, sync), and the sandbox runs as `nobody` when the tests run as root.
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { hostname, networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Sandbox } from '../support/sandbox.ts';
import { commandTraces } from './trace.ts';

export interface Canary {
  readonly name: string;
  /** What went wrong, one line each; empty when the sandbox held. */
  readonly check: (sandbox: Sandbox) => Promise<string[]>;
}

const token = (): string => randomBytes(6).toString('hex');
const NOBODY = 65534;

/** Runs one command in the sandbox and returns its output and status. */
async function run(sandbox: Sandbox, command: string, options: { readOnlyBinds?: readonly string[]; limitSeconds?: number } = {}) {
  const batch = await sandbox.runBatch([command], { limitSeconds: options.limitSeconds ?? 5, ...(options.readOnlyBinds ? { readOnlyBinds: options.readOnlyBinds } : {}) });
  const outcome = batch.outcomes[0];
  const [trace] = commandTraces(batch.trace, [command]);
  // A canary whose command never ran would pass for nothing.
  if (outcome?.status === undefined || trace?.started !== true) throw new Error(`the sandbox did not run ${command}: ${batch.stderr}`);
  return { ...outcome, trace };
}

const alive = async (pid: number): Promise<boolean> => {
  const status = await readFile(`/proc/${String(pid)}/status`, 'utf8').catch(() => '');
  return /^State:\s+[^ZX]/m.test(status);
};

/** The namespaces a process is in, by kind (`/proc/PID/ns/*` links). */
async function namespaces(pid: number | 'self'): Promise<Map<string, string>> {
  const dir = `/proc/${String(pid)}/ns`;
  const kinds = ['user', 'mnt', 'pid', 'net', 'uts', 'ipc', 'cgroup'];
  return new Map(await Promise.all(kinds.map(async (k) => [k, await readlink(join(dir, k)).catch(() => '?')] as const)));
}

/** Processes whose command line holds `mark`, with their PIDs. */
async function processesMarked(mark: string): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p)).map(Number);
  const found: number[] = [];
  for (const pid of pids) {
    const cmdline = await readFile(`/proc/${String(pid)}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(mark) && pid !== process.pid) found.push(pid);
  }
  return found;
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

export const CANARIES: readonly Canary[] = [
  {
    name: 'a world-writable file on a real path, bound read-only inside, survives writing, removing, moving and chmod',
    check: async (sandbox) => {
      const dir = await mkdtemp(join(tmpdir(), 'nomos-canary-'));
      try {
        await chmod(dir, 0o777);
        const target = join(dir, 'target');
        await writeFile(target, 'intact\n');
        await chmod(target, 0o666);
        const mark = token();
        const attacks = [
          `echo pwned > ${target}`, `echo pwned >> ${target}`, `rm -rf ${dir}/*`, `chmod -R 000 ${dir}`, `mv ${target} ${dir}/moved`,
          `touch ${dir}/new`, `ln -s / ${dir}/link`, `mkdir ${dir}/sub`, `truncate -s 0 ${target}`,
          `touch /etc/nomos-canary-${mark} /usr/nomos-canary-${mark} /var/nomos-canary-${mark}`,
        ];
        const ran = await run(sandbox, attacks.join('; '), { readOnlyBinds: [dir] });
        const problems: string[] = [];
        if (!ran.trace.fileChanges.some((c) => c.path === target)) problems.push(`no change to ${target} was attempted: the canary proved nothing`);
        if ((await readFile(target, 'utf8').catch(() => 'gone')) !== 'intact\n') problems.push(`${target} was changed`);
        if (((await stat(target).catch(() => undefined))?.mode ?? 0) % 0o1000 !== 0o666) problems.push(`${target}'s mode was changed`);
        const entries = await readdir(dir);
        if (entries.join() !== 'target') problems.push(`${dir} now holds ${entries.join(', ')}`);
        for (const path of [`/etc/nomos-canary-${mark}`, `/usr/nomos-canary-${mark}`, `/var/nomos-canary-${mark}`]) {
          if (await stat(path).then(() => true, () => false)) {
            problems.push(`${path} was created`);
            await rm(path, { force: true });
          }
        }
        return problems;
      } finally {
        await chmod(dir, 0o700).catch(() => undefined);
        await rm(dir, { recursive: true, force: true });
      }
    },
  },
  {
    name: 'kill -9 -1, pkill and killall inside leave a process outside alive, though it runs as the same user',
    check: async (sandbox) => {
      const asRoot = process.getuid?.() === 0;
      const mark = `61.${String(Date.now() % 100000)}`;
      const outside = spawn('sleep', [mark], { stdio: 'ignore', ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}) });
      try {
        await sleep(100);
        if (outside.pid === undefined || !(await alive(outside.pid))) return ['the outside process did not start'];
        const ran = await run(sandbox, 'kill -9 -1; pkill -9 sleep; killall -9 sleep; kill -9 1');
        const problems = ran.trace.systemChanges.some((c) => c.what === 'signal 9 to every process') ? [] : ['kill -9 -1 made no kill call: the canary proved nothing'];
        return (await alive(outside.pid)) ? problems : [...problems, `process ${String(outside.pid)} outside was killed`];
      } finally {
        outside.kill('SIGKILL');
      }
    },
  },
  {
    name: 'ip link set lo down and ip addr add inside change no interface outside',
    check: async (sandbox) => {
      const flags = async (): Promise<string> => readFile('/sys/class/net/lo/flags', 'utf8');
      const before = await flags();
      const address = '10.213.77.9';
      const ran = await run(sandbox, `ip link set lo down; ip addr add ${address}/32 dev lo; ip route add 10.213.0.0/16 dev lo`);
      const problems: string[] = [];
      if (ran.trace.systemChanges.filter((c) => c.what.startsWith('netlink')).length < 3) problems.push('the netlink requests were not all made: the canary proved nothing');
      if ((await flags()) !== before) problems.push(`lo's flags changed from ${before.trim()}`);
      if (Object.values(networkInterfaces()).flat().some((i) => i?.address === address)) problems.push(`${address} was added outside`);
      return problems;
    },
  },
  {
    name: 'hostname, reboot -f, poweroff -f, the reboot call and sysrq inside are refused, and the machine keeps its name',
    check: async (sandbox) => {
      const name = hostname();
      // The direct call asks for LINUX_REBOOT_CMD_CAD_OFF (only disables Ctrl-Alt-Del) through reboot(2) on x86-64:
      // the same privilege as a reboot, harmless if granted, and made whether or not the machine has a reboot program.
      const cadOff = `perl -e 'syscall(169, 0xfee1dead, 672274793, 0) == -1 or print "reboot call granted\n"'`;
      const ran = await run(sandbox, `hostname nomos-canary; reboot -f; poweroff -f; ${cadOff}; echo s > /proc/sysrq-trigger`);
      const problems: string[] = [];
      if (hostname() !== name) problems.push(`the host name changed to ${hostname()}`);
      const reboots = ran.trace.systemChanges.filter((c) => c.syscall === 'reboot');
      if (reboots.length === 0) problems.push('reboot -f made no reboot call: the canary proved nothing');
      if (reboots.some((c) => c.errno === undefined) || ran.output.includes("reboot call granted")) problems.push("a reboot call was not refused");
      const sysrq = ran.trace.fileChanges.filter((c) => c.path === '/proc/sysrq-trigger');
      if (sysrq.length === 0) problems.push('the write to /proc/sysrq-trigger was never attempted: the canary proved nothing');
      if (sysrq.some((c) => c.errno === undefined)) problems.push('/proc/sysrq-trigger was opened for writing');
      return problems;
    },
  },
  {
    name: 'mount inside is refused and adds no mount outside',
    check: async (sandbox) => {
      const mark = `nomos-canary-${token()}`;
      const ran = await run(sandbox, `mkdir -p /tmp/${mark} && mount -t tmpfs none /tmp/${mark}; mount --bind / /tmp/${mark}; umount /usr`);
      const problems: string[] = [];
      if ((await readFile('/proc/self/mountinfo', 'utf8')).includes(mark)) problems.push(`a mount on ${mark} appeared outside`);
      const mounts = ran.trace.systemChanges.filter((c) => c.syscall === 'mount' || c.syscall === 'umount2');
      if (mounts.length === 0) problems.push('no mount call was made: the canary proved nothing');
      if (mounts.some((c) => c.errno === undefined)) problems.push('a mount call was not refused');
      return problems;
    },
  },
  {
    name: "no network: a server on the machine's loopback is unreachable from inside",
    check: async (sandbox) => {
      let connections = 0;
      const server = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      try {
        const ran = await run(sandbox, `curl -s -m 2 http://127.0.0.1:${String(port)}/; bash -c 'echo x > /dev/tcp/127.0.0.1/${String(port)}'`);
        const problems = ran.trace.execs.some((e) => e.path.endsWith('/curl')) ? [] : ['curl never ran: the canary proved nothing'];
        return connections === 0 ? problems : [...problems, `${String(connections)} connections reached the server outside`];
      } finally {
        server.close();
      }
    },
  },
  {
    name: 'inside, no capabilities, no new privileges, no new user namespaces, and no disks in /dev',
    check: async (sandbox) => {
      const ran = await run(sandbox, "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status; unshare -r true && echo nested-userns; echo @@dev; ls -A /dev");
      const problems: string[] = [];
      for (const cap of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) {
        if (!new RegExp(`^${cap}:\\s+0+$`, 'm').test(ran.output)) problems.push(`${cap} is not empty`);
      }
      if (!/^NoNewPrivs:\s+1$/m.test(ran.output)) problems.push('no_new_privs is not set');
      if (ran.output.includes('nested-userns')) problems.push('a nested user namespace could be created');
      const safe = new Set(['core', 'fd', 'full', 'null', 'ptmx', 'pts', 'random', 'shm', 'stderr', 'stdin', 'stdout', 'tty', 'urandom', 'zero']);
      const devices = ran.output.slice(ran.output.indexOf('@@dev\n') + 6).split('\n').filter((l) => l !== '');
      const unexpected = devices.filter((d) => !safe.has(d));
      if (unexpected.length > 0) problems.push(`/dev holds ${unexpected.join(', ')}`);
      return problems;
    },
  },
  {
    name: 'every command meets its time limit',
    check: async (sandbox) => {
      const started = Date.now();
      const ran = await run(sandbox, 'sleep 30', { limitSeconds: 1 });
      const problems: string[] = [];
      if (ran.status !== 137) problems.push(`sleep 30 under a 1 s limit ended with ${String(ran.status)}, not killed`);
      if (Date.now() - started > 15_000) problems.push(`the batch took ${String(Date.now() - started)} ms`);
      return problems;
    },
  },
  {
    name: 'the sandbox runs in namespaces and a session of its own, as an unprivileged user, and dies with its parent',
    check: async (sandbox) => {
      const mark = `59.${String(Date.now() % 100000)}`;
      const abort = new AbortController();
      const batch = sandbox.runBatch([`sleep ${mark}`], { limitSeconds: 60, signal: abort.signal });
      const problems: string[] = [];
      let pids: number[] = [];
      for (let i = 0; i < 100 && pids.length === 0; i++) {
        await sleep(100);
        pids = await processesMarked(`sleep\0${mark}`);
      }
      const [pid] = pids;
      if (pid === undefined) {
        abort.abort();
        await batch;
        return ['the marked process never appeared'];
      }
      const mine = await namespaces('self');
      const theirs = await namespaces(pid);
      for (const [kind, link] of theirs) if (link === mine.get(kind)) problems.push(`it shares the ${kind} namespace`);
      const session = async (p: number | 'self'): Promise<string | undefined> => (await readFile(`/proc/${String(p)}/stat`, 'utf8')).replace(/^.*\) /s, '').split(' ')[3];
      if ((await session(pid)) === (await session('self'))) problems.push('it shares the session of the tests');
      const uid = /^Uid:\s+(\d+)/m.exec(await readFile(`/proc/${String(pid)}/status`, 'utf8'))?.[1];
      if (process.getuid?.() === 0 && uid !== String(NOBODY)) problems.push(`it runs as uid ${String(uid)}, not nobody`);
      abort.abort();
      await batch;
      await sleep(300);
      const left = await processesMarked(`sleep\0${mark}`);
      if (left.length > 0) problems.push(`processes ${left.join(', ')} outlived the batch killed from outside`);
      return problems;
    },
  },
];

/** Runs every canary; throws naming each that failed, so that nothing runs in a sandbox that does not hold. */
export async function proveSandbox(sandbox: Sandbox): Promise<void> {
  const failed: string[] = [];
  for (const canary of CANARIES) {
    const problems = await canary.check(sandbox);
    if (problems.length > 0) failed.push(`${canary.name}: ${problems.join('; ')}`);
  }
  if (failed.length > 0) throw new Error(`the sandbox does not hold; the corpus will not run:\n${failed.join('\n')}`);
}
