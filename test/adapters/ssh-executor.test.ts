// The SSH executor against a real SSH server on loopback (OpenSSH when installed, as in CI; ssh2's server too),
// with the pct and qm stand-ins from examples/sandbox/bin on the server's PATH.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { utils } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshExecutor } from '../../src/adapters/ssh/executor.ts';
import { SshExecHandle } from '../../src/adapters/ssh/handle.ts';
import { formatHostKey, matchesPinnedKey } from '../../src/adapters/ssh/host-key.ts';
import { classifyTree, confirmHung, parseProcStat, processTree } from '../../src/adapters/ssh/process-tree.ts';
import { SshPool } from '../../src/adapters/ssh/pool.ts';
import { decodeQmExec } from '../../src/adapters/ssh/qm.ts';
import { commandLine, shellQuote } from '../../src/adapters/ssh/remote-command.ts';
import { PidMarkerFilter, Tail } from '../../src/adapters/ssh/tail.ts';
import { type ExecTarget, HostKeyMismatchError, type SshHost } from '../../src/ports/executor.ts';
import { type SshPeer, ed25519KeyPair, sshPeerKinds, startSshPeer } from '../support/ssh-peer.ts';

/** Every character a shell treats specially, and a few it does not. */
const NASTY = `it's a "b" $HOME \${x} $(id) \`id\` back\\slash \\n * ? [a] ~ ! # % & | ; < > ( ) { } '\\'' é\n\ttab line\n`;

function targetsOf(host: SshHost): ExecTarget[] {
  return [
    { kind: 'host', host },
    { kind: 'lxc', host, pveId: 101 },
    { kind: 'vm', host, pveId: 202 },
  ];
}

/** The processes' state letters, or 'gone' (zombies count as gone: they only wait to be reaped). */
function processState(pid: number): string {
  try {
    const state = parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))[0]?.state ?? 'gone';
    return state === 'Z' ? 'gone' : state;
  } catch {
    return 'gone';
  }
}

async function pidsIn(file: string): Promise<number[]> {
  return (await readFile(file, 'utf8')).split(/\s+/).filter(Boolean).map(Number);
}

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const python = ((): string | null => {
  try {
    return execFileSync('python3', ['-c', 'import os, sys; print(sys.executable if hasattr(os, "posix_spawn") else "")'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
})();

describe.each(sshPeerKinds())('SshExecutor against %s', (kind) => {
  let peer: SshPeer;
  let executor: SshExecutor;
  let host: SshHost;
  let dir: string;

  beforeAll(async () => {
    peer = await startSshPeer(kind);
    expect(peer.kind).toBe(kind);
    host = { ...peer.host, hostKey: peer.hostKey };
    executor = new SshExecutor({ privateKey: peer.privateKey });
    dir = await mkdtemp(join(tmpdir(), 'nomos-ssh-test-'));
  });

  afterAll(async () => {
    await executor?.close();
    await peer?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe.each(['host', 'lxc', 'vm'] as const)('on a %s target', (targetKind) => {
    const target = (): ExecTarget => targetsOf(host).find((t) => t.kind === targetKind)!;

    it('delivers the command to the inner sh -c byte for byte', async () => {
      const handle = await executor.start(target(), `cat <<'NOMOS_END'\n${NASTY}NOMOS_END`, { hardLimitMs: 20_000 });
      const result = await handle.result;
      expect(result).toMatchObject({ exitCode: 0, signal: null, stderrTail: '', timedOut: false });
      expect(result.stdoutTail).toBe(NASTY);
    });

    it('runs the command through exactly one shell', async () => {
      const command = `printf '%s|' "it's" "a \\"b\\"" '$HOME' "$((1+2))" 'back\\slash' "\\\`x\\\`" 'multi\nline' '*' ~nobody_such_user`;
      const result = await (await executor.start(target(), command, { hardLimitMs: 20_000 })).result;
      expect(result.stdoutTail).toBe('it\'s|a "b"|$HOME|3|back\\slash|`x`|multi\nline|*|~nobody_such_user|');
    });

    it('reports the exit code, stdout and stderr apart, without the PID marker', async () => {
      const result = await (await executor.start(target(), 'echo out; echo err >&2; exit 7', { hardLimitMs: 20_000 })).result;
      expect(result).toEqual({ exitCode: 7, signal: null, stdoutTail: 'out\n', stderrTail: 'err\n', timedOut: false });
    });

    it('kills the command and its children at the hard limit', async () => {
      const pidFile = join(dir, `hard-limit-${targetKind}`);
      const started = Date.now();
      const handle = await executor.start(target(), `echo $$ > ${pidFile}; sleep 30 & echo $! >> ${pidFile}; wait`, { hardLimitMs: 1500 });
      const result = await handle.result;
      // Well before the 30 s sleep would have ended on its own (generous: a busy machine is slow, not wrong).
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: true });
      const pids = await pidsIn(pidFile);
      expect(pids).toHaveLength(2);
      await eventually(() => pids.every((pid) => processState(pid) === 'gone'));
    });
  });

  describe.each(['host', 'lxc'] as const)('live state on a %s target', (targetKind) => {
    const target = (): ExecTarget => targetsOf(host).find((t) => t.kind === targetKind)!;

    it('shows the output so far and how long it has been quiet', async () => {
      const handle = await executor.start(target(), 'echo started; echo warming >&2; sleep 5', { hardLimitMs: 20_000 });
      await eventually(() => handle.output().stdout === 'started\n' && handle.output().stderr === 'warming\n');
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(handle.idleMs()).toBeGreaterThanOrEqual(350);
      await handle.kill();
      expect(await handle.result).toMatchObject({ stdoutTail: 'started\n', stderrTail: 'warming\n', timedOut: false, signal: 'SIGKILL' });
    });

    it("probes 'running' while the command sleeps and 'exited' once it ended", async () => {
      const handle = await executor.start(target(), 'sleep 3', { hardLimitMs: 20_000 });
      expect(await handle.probe()).toBe('running');
      expect((await handle.result).exitCode).toBe(0);
      expect(await handle.probe()).toBe('exited');
    });

    it.skipIf(python === null)("probes 'hung' for a child in uninterruptible sleep (state D), and kill still ends it (needs python3 to make a real state-D process; skipped without it)", async () => {
      // A vfork parent waits in state D until its child execs; the child here first blocks opening a FIFO nobody
      // writes to, so the parent stays in D — the same state as a chown stuck on a knfsd-held directory.
      const fifo = join(dir, `fifo-${targetKind}`);
      const pidFile = join(dir, `hung-${targetKind}`);
      const spawnInD = `import os; open(${JSON.stringify(pidFile)}, "w").write(str(os.getpid())); os.posix_spawn("/bin/true", ["true"], os.environ, file_actions=[(os.POSIX_SPAWN_OPEN, 0, ${JSON.stringify(fifo)}, os.O_RDONLY, 0)])`;
      const handle = await executor.start(target(), `mkfifo ${fifo} && ${python} -c ${shellQuote(spawnInD)}`, { hardLimitMs: 20_000 });
      await eventually(() => existsSync(pidFile) && processState(Number(readFileSync(pidFile, 'utf8'))) === 'D');
      expect(await handle.probe()).toBe('hung');
      await handle.kill();
      expect(await handle.result).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
      await eventually(() => processState(Number(readFileSync(pidFile, 'utf8'))) === 'gone');
    });
  });

  it("probes a vm command on the host (the qm process): 'running', then 'exited'", async () => {
    const handle = await executor.start({ kind: 'vm', host, pveId: 202 }, 'sleep 1.5; echo done', { hardLimitMs: 20_000 });
    expect(await handle.probe()).toBe('running');
    expect(handle.output().stdout).toBe('');
    expect(await handle.result).toMatchObject({ exitCode: 0, stdoutTail: 'done\n' });
    expect(await handle.probe()).toBe('exited');
  });

  it('keeps the exit status of a command that ended before its handle listened', async () => {
    // On a busy machine the exec's success, the output, the exit status and the close can all be read from the
    // socket in one go, and ssh2 emits 'exit' then, before the handle exists. Here the handle is made only after
    // the exit report was parsed (a listener of the test's own sees it), with the output still unread.
    const pool = new SshPool({ privateKey: peer.privateKey, connectTimeoutMs: 10_000, keepaliveIntervalMs: 15_000, keepaliveCountMax: 3, idleCloseMs: 60_000, maxChannelsPerConnection: 10 });
    try {
      for (const [command, ending] of [
        ['echo out; exit 3', { exitCode: 3, signal: null }],
        ['echo out; kill -KILL $$', { exitCode: null, signal: 'SIGKILL' }],
      ] as const) {
        const { channel, hostKey } = await pool.exec(host, commandLine({ kind: 'host' }, command, { qmTimeoutSeconds: 5 }));
        // The report is parsed after this listener is attached, or (on a loaded machine) already was, with the
        // exec's success: either way the handle below comes after it. The second case has no event to wait for.
        let reported = false;
        channel.once('exit', () => (reported = true));
        const listening = Date.now();
        await expect.poll(() => reported || Date.now() - listening > 2_000, { timeout: 10_000 }).toBe(true);
        const handle = new SshExecHandle(channel, { target: { kind: 'host' }, hostKey, tailBytes: 1024, qmOutputLimitBytes: 1024, hardLimitMs: 20_000, runControl: () => Promise.reject(new Error('not used')) });
        expect(await handle.result).toMatchObject({ ...ending, stdoutTail: 'out\n', timedOut: false });
      }
    } finally {
      await pool.close();
    }
  });

  describe('host keys', () => {
    it('connects when the pinned key matches, whatever comment the pin carries', async () => {
      const handle = await executor.start({ kind: 'host', host: { ...host, hostKey: `${peer.hostKey} root@somewhere` } }, 'true', { hardLimitMs: 20_000 });
      expect(handle.hostKey).toBe(peer.hostKey);
      expect((await handle.result).exitCode).toBe(0);
    });

    it('refuses another key than the pinned one and runs nothing', async () => {
      const marker = join(dir, 'must-not-exist');
      const otherKey = ed25519KeyPair().public.split(' ').slice(0, 2).join(' ');
      const pinnedElsewhere: SshHost = { ...host, hostKey: otherKey };
      for (const target of targetsOf(pinnedElsewhere)) {
        const attempt = executor.start(target, `touch ${marker}`, { hardLimitMs: 20_000 });
        await expect(attempt).rejects.toBeInstanceOf(HostKeyMismatchError);
        await expect(attempt).rejects.toMatchObject({ code: 'host_key_mismatch', host: host.slug, expected: otherKey, presented: peer.hostKey });
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(existsSync(marker)).toBe(false);
    });

    it('accepts an unpinned host and reports its key for pinning', async () => {
      const handle = await executor.start({ kind: 'host', host: { ...host, hostKey: null } }, 'true', { hardLimitMs: 20_000 });
      expect(handle.hostKey).toBe(peer.hostKey);
      await handle.result;
    });

    it('does not reuse a connection verified under an earlier pin once the pin changes', async () => {
      const own = new SshExecutor({ privateKey: peer.privateKey });
      try {
        const first = await own.start({ kind: 'host', host: { ...host, hostKey: null } }, 'sleep 0.5', { hardLimitMs: 20_000 });
        const otherKey = ed25519KeyPair().public;
        await expect(own.start({ kind: 'host', host: { ...host, hostKey: otherKey } }, 'true', { hardLimitMs: 20_000 })).rejects.toBeInstanceOf(HostKeyMismatchError);
        await first.result;
      } finally {
        await own.close();
      }
    });
  });

  describe('connection pool', () => {
    it('runs concurrent commands on one host over one connection', async () => {
      const own = new SshExecutor({ privateKey: peer.privateKey });
      try {
        const handles = await Promise.all(
          Array.from({ length: 10 }, (_, i) => own.start(i % 2 ? { kind: 'lxc', host, pveId: 101 } : { kind: 'host', host }, `sleep 0.3; echo ${i}`, { hardLimitMs: 20_000 })),
        );
        const results = await Promise.all(handles.map((handle) => handle.result));
        expect(results.map((result) => [result.exitCode, result.stdoutTail])).toEqual(Array.from({ length: 10 }, (_, i) => [0, `${i}\n`]));
        expect(own.connectionsOpened).toBe(1);
      } finally {
        await own.close();
      }
    });

    it('opens another connection when one is full, instead of queueing behind running commands', async () => {
      const own = new SshExecutor({ privateKey: peer.privateKey, maxChannelsPerConnection: 4 });
      try {
        const handles = await Promise.all(Array.from({ length: 10 }, () => own.start({ kind: 'host', host }, 'sleep 1', { hardLimitMs: 20_000 })));
        expect(own.connectionsOpened).toBe(3);
        // Every channel is busy, yet a probe still gets through.
        expect(await handles[0]!.probe()).toBe('running');
        expect((await Promise.all(handles.map((handle) => handle.result))).every((result) => result.exitCode === 0)).toBe(true);
      } finally {
        await own.close();
      }
    });

    it('reconnects once an idle connection was closed', async () => {
      const own = new SshExecutor({ privateKey: peer.privateKey, idleCloseMs: 50 });
      try {
        expect((await (await own.start({ kind: 'host', host }, 'echo one', { hardLimitMs: 20_000 })).result).stdoutTail).toBe('one\n');
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect((await (await own.start({ kind: 'host', host }, 'echo two', { hardLimitMs: 20_000 })).result).stdoutTail).toBe('two\n');
        expect(own.connectionsOpened).toBe(2);
      } finally {
        await own.close();
      }
    });
  });
});

describe('remote command lines', () => {
  it('quotes each layer once', () => {
    expect(shellQuote(`it's`)).toBe(`'it'\\''s'`);
    const marker = `echo "__nomos_pid=$$" >&2; exec `;
    expect(commandLine({ kind: 'host' }, `echo 'a'`, { qmTimeoutSeconds: 5 })).toBe(`exec sh -c ${shellQuote(`${marker}sh -c 'echo '\\''a'\\'''`)}`);
    expect(commandLine({ kind: 'lxc', pveId: 101 }, 'true', { qmTimeoutSeconds: 5 })).toBe(`exec pct exec 101 -- sh -c ${shellQuote(`${marker}sh -c 'true'`)}`);
    expect(commandLine({ kind: 'vm', pveId: 202 }, 'true', { qmTimeoutSeconds: 5 })).toBe(`exec sh -c ${shellQuote(`${marker}qm guest exec 202 --timeout 5 -- sh -c 'true'`)}`);
  });

  it('refuses a guest id that is not a plain integer', () => {
    expect(() => commandLine({ kind: 'lxc', pveId: 1.5 }, 'true', { qmTimeoutSeconds: 5 })).toThrow(RangeError);
  });
});

describe('process table', () => {
  // /proc/PID/stat lines: a name may hold spaces and parentheses.
  const table = [
    '1 (systemd) S 0 1 1 0 -1',
    '500 (sh) S 1 500 500 0 -1',
    '501 (sh) S 500 500 500 0 -1',
    '502 (chown :10000 (x)) D 501 500 500 0 -1',
    '503 (sleep) S 500 500 500 0 -1',
    '600 (kworker) D 2 0 0 0 -1',
    '700 (sh) Z 1 700 700 0 -1',
    '800 (sh) Z 1 800 800 0 -1',
    '801 (sleep) S 800 800 800 0 -1',
    'garbage',
  ].join('\n');
  const rows = parseProcStat(table);

  it('parses pid, parent and state past a name with spaces and parentheses', () => {
    expect(rows).toHaveLength(9);
    expect(rows.find((row) => row.pid === 502)).toEqual({ pid: 502, ppid: 501, state: 'D', cpuTicks: null });
  });

  it('reads the CPU time (utime + stime) from a full line', () => {
    const line = '4918 (cat) D 4913 4913 4278 0 -1 4194304 101 0 0 0 7 5 0 0 20 0 1 0 15638 3133440 411';
    expect(parseProcStat(line)).toEqual([{ pid: 4918, ppid: 4913, state: 'D', cpuTicks: 12 }]);
  });

  it('walks the tree below the root', () => {
    expect(processTree(rows, 500).map((row) => row.pid)).toEqual([500, 501, 503, 502]);
    expect(processTree(rows, 999)).toEqual([]);
  });

  it("says 'hung' when a descendant is in state D, not when some other process is", () => {
    expect(classifyTree(rows, 500)).toBe('hung');
    expect(classifyTree(rows, 503)).toBe('running');
  });

  describe('confirming a hang from a second table', () => {
    const statLine = (pid: number, ppid: number, state: string, ticks: number) => `${pid} (sh) ${state} ${ppid} ${pid} ${pid} 0 -1 0 0 0 0 0 ${ticks} 0 0 0`;
    const readings = (...lines: string[]) => parseProcStat(lines.join('\n'));

    it("says 'hung' when the same process stays in D and spends no CPU time", () => {
      const before = readings(statLine(500, 1, 'S', 3), statLine(502, 500, 'D', 40));
      const after = readings(statLine(500, 1, 'S', 3), statLine(502, 500, 'D', 40));
      expect(confirmHung(before, after, 500)).toBe('hung');
    });

    it("says 'running' for a moment's state D: gone from D, spending CPU, or another process in D", () => {
      const before = readings(statLine(500, 1, 'D', 3));
      expect(confirmHung(before, readings(statLine(500, 1, 'S', 3)), 500)).toBe('running');
      expect(confirmHung(before, readings(statLine(500, 1, 'D', 9)), 500)).toBe('running');
      expect(confirmHung(before, readings(statLine(500, 1, 'S', 3), statLine(510, 500, 'D', 0)), 500)).toBe('running');
    });

    it("says 'exited' when the tree is gone by the second table, and 'hung' when the lines carry no CPU time", () => {
      expect(confirmHung(readings(statLine(500, 1, 'D', 3)), readings(statLine(1, 0, 'S', 0)), 500)).toBe('exited');
      expect(confirmHung(rows, rows, 500)).toBe('hung');
    });
  });

  it("says 'exited' when the root is gone or a zombie without living children", () => {
    expect(classifyTree(rows, 999)).toBe('exited');
    expect(classifyTree(rows, 700)).toBe('exited');
    expect(classifyTree(rows, 800)).toBe('running');
  });
});

describe('qm guest exec output', () => {
  it('decodes exit code and streams, with empty streams left out', () => {
    expect(decodeQmExec('{"exitcode":0,"exited":1,"out-data":"a\\n"}')).toEqual({ kind: 'exited', exitCode: 0, signal: null, stdout: 'a\n', stderr: '', truncated: false });
    expect(decodeQmExec('{"exitcode":2,"exited":1,"err-data":"e","err-truncated":1}')).toMatchObject({ exitCode: 2, stderr: 'e', truncated: true });
    expect(decodeQmExec('{"exited":1,"signal":9}')).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
  });

  it('reads a PID-only answer as still running in the guest', () => {
    expect(decodeQmExec('{"pid":4242}')).toEqual({ kind: 'running', pid: 4242 });
  });

  it('does not take anything else for a result', () => {
    expect(decodeQmExec('VM 202 not running')).toMatchObject({ kind: 'unreadable' });
    expect(decodeQmExec('{"exited":1,"exitcode":"0"}')).toMatchObject({ kind: 'unreadable' });
    expect(decodeQmExec('{}')).toMatchObject({ kind: 'unreadable' });
  });
});

describe('output tails', () => {
  it('keeps only the last bytes, never a broken character at the cut', () => {
    const tail = new Tail(5);
    tail.push(Buffer.from('abc'));
    tail.push(Buffer.from('déf'));
    expect(tail.text()).toBe('cdéf');
    tail.push(Buffer.from('0123456789'));
    expect(tail.text()).toBe('56789');
    const cut = new Tail(2);
    cut.push(Buffer.from('déf'));
    expect(cut.text()).toBe('f');
  });

  it('strips the PID line even when split across chunks, and passes earlier lines through', () => {
    const passed: string[] = [];
    let pid = 0;
    const filter = new PidMarkerFilter((p) => (pid = p), (chunk) => passed.push(chunk.toString()));
    filter.push(Buffer.from('motd line\n__nomos_'));
    filter.push(Buffer.from('pid=4321\nreal err'));
    filter.push(Buffer.from('or\n'));
    expect(pid).toBe(4321);
    expect(passed.join('')).toBe('motd line\nreal error\n');
  });
});

describe('host key format', () => {
  it('formats and matches a key by its blob', () => {
    const { public: publicKey } = ed25519KeyPair();
    const parsed = utils.parseKey(publicKey);
    if (parsed instanceof Error) throw parsed;
    const blob = parsed.getPublicSSH();
    expect(formatHostKey(blob)).toBe(publicKey.split(' ').slice(0, 2).join(' '));
    expect(matchesPinnedKey(`${publicKey} comment`, blob)).toBe(true);
    expect(matchesPinnedKey(publicKey.replace('ssh-ed25519', 'ssh-rsa'), blob)).toBe(false);
    expect(matchesPinnedKey('garbage', blob)).toBe(false);
  });
});
