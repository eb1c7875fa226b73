// An SSH server on 127.0.0.1 for the executor's tests: a real OpenSSH sshd when the machine has one (CI does),
// else ssh2's own server running commands with `sh -c`. Commands find the pct and qm stand-ins on their PATH.

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Server, utils, type Connection, type ServerChannel } from 'ssh2';
import type { SshHost } from '../../src/ports/executor.ts';

export type SshPeerKind = 'openssh' | 'ssh2';

export interface SshPeer {
  readonly host: SshHost;
  readonly privateKey: Buffer;
  /** The peer's host key, "type base64". */
  readonly hostKey: string;
  readonly kind: SshPeerKind;
  close(): Promise<void>;
}

const SSHD = '/usr/sbin/sshd';
/** The pct, qm and sudo stand-ins, shared with the sandbox a reader tries the README's tour on. */
const FIXTURES_BIN = resolve(import.meta.dirname, '../../examples/sandbox/bin');
/** The stand-ins first; node's own directory so the qm stand-in finds node wherever it is installed. */
const PEER_PATH = [FIXTURES_BIN, dirname(process.execPath), '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'].join(':');

/** The peer as the `ssh` of a host entity, its host key pinned. */
export const sshOf = (peer: SshPeer) => ({ host: peer.host.address, port: peer.host.port, user: peer.host.user, host_key: peer.hostKey });

export function sshPeerKinds(): SshPeerKind[] {
  return existsSync(SSHD) ? ['openssh', 'ssh2'] : ['ssh2'];
}

export async function startSshPeer(kind: SshPeerKind = existsSync(SSHD) ? 'openssh' : 'ssh2'): Promise<SshPeer> {
  return kind === 'openssh' ? startOpenSsh() : startSsh2Server();
}

function hostFor(port: number): SshHost {
  return { slug: 'host:test-peer', address: '127.0.0.1', port, user: userInfo().username, hostKey: null };
}

/** "type base64 comment" → "type base64". */
function keyWithoutComment(publicKey: string): string {
  return publicKey.trim().split(/\s+/).slice(0, 2).join(' ');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  await new Promise((ok) => server.close(ok));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function startOpenSsh(): Promise<SshPeer> {
  const dir = await mkdtemp(join(tmpdir(), 'nomos-sshd-'));
  const keygen = (file: string): void => {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'nomos-test', '-f', join(dir, file)]);
  };
  keygen('host_ed25519');
  keygen('client_ed25519');
  await writeFile(join(dir, 'authorized_keys'), await readFile(join(dir, 'client_ed25519.pub')));
  const port = await freePort();
  const config = join(dir, 'sshd_config');
  await writeFile(
    config,
    [
      'ListenAddress 127.0.0.1',
      `Port ${port}`,
      `HostKey ${join(dir, 'host_ed25519')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'PrintMotd no',
      `PidFile ${join(dir, 'sshd.pid')}`,
      // bash, root's login shell, sources $HOME/.bashrc for every command sshd runs: HOME is the peer's own
      // directory, so the machine's rc files (a pyenv init on some images, ~0.5 s a command) do not slow each
      // command, nor change PATH, in ways the tests cannot see.
      `SetEnv "PATH=${PEER_PATH}" "HOME=${dir}"`,
      'MaxSessions 50',
      'MaxStartups 50',
      '',
    ].join('\n'),
  );
  // sshd refuses to start without its privilege separation directory.
  await mkdir('/run/sshd', { recursive: true });
  const sshd = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  sshd.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  try {
    await waitForPort(port, sshd, () => log);
  } catch (error) {
    sshd.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    host: hostFor(port),
    privateKey: await readFile(join(dir, 'client_ed25519')),
    hostKey: keyWithoutComment(await readFile(join(dir, 'host_ed25519.pub'), 'utf8')),
    kind: 'openssh',
    async close() {
      await stop(sshd);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, process: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (process.exitCode !== null || process.signalCode !== null) throw new Error(`sshd exited: ${log()}`);
    const accepted = await new Promise<boolean>((ok) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        ok(true);
      });
      socket.once('error', () => ok(false));
    });
    if (accepted) return;
    if (Date.now() > deadline) throw new Error(`sshd did not listen on ${port}: ${log()}`);
    await new Promise((ok) => setTimeout(ok, 50));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((ok) => {
    child.once('exit', () => ok());
    child.kill('SIGTERM');
  });
}

/**
 * An ed25519 key pair that ssh2 can read back. ssh2's generator strips every leading zero byte of the public key,
 * so about one pair in 256 comes out "Malformed" to its own parseKey (mscdex/ssh2#1390, #1514): CI met one.
 */
export function ed25519KeyPair(): { public: string; private: string } {
  for (let attempt = 0; attempt < 20; attempt++) {
    const pair = utils.generateKeyPairSync('ed25519');
    if (!(utils.parseKey(pair.public) instanceof Error) && !(utils.parseKey(pair.private) instanceof Error)) return pair;
  }
  throw new Error('ssh2 generated 20 ed25519 key pairs it cannot read back');
}

/** ssh2's server, doing what sshd does for an exec request: `sh -c` in a new session, streams and exit status. */
async function startSsh2Server(): Promise<SshPeer> {
  const hostKeys = ed25519KeyPair();
  const clientKeys = ed25519KeyPair();
  const allowed = utils.parseKey(clientKeys.public);
  if (allowed instanceof Error) throw allowed;
  const children = new Set<ChildProcess>();
  const clients = new Set<Connection>();

  const server = new Server({ hostKeys: [hostKeys.private] }, (client: Connection) => {
    clients.add(client);
    client.once('close', () => clients.delete(client));
    client.on('authentication', (ctx) => {
      if (ctx.method !== 'publickey' || ctx.key.algo !== allowed.type || !ctx.key.data.equals(allowed.getPublicSSH())) {
        ctx.reject(['publickey']);
        return;
      }
      if (ctx.signature === undefined || ctx.blob === undefined) ctx.accept();
      else if (allowed.verify(ctx.blob, ctx.signature, ctx.hashAlgo) === true) ctx.accept();
      else ctx.reject(['publickey']);
    });
    client.on('session', (accept) => {
      const session = accept();
      let child: ChildProcess | null = null;
      session.on('signal', (accept, _reject, info) => {
        accept?.();
        child?.kill(`SIG${info.name}` as NodeJS.Signals);
      });
      session.on('exec', (accept, _reject, info) => {
        const channel: ServerChannel = accept();
        const running = spawn('sh', ['-c', info.command], { env: { ...process.env, PATH: PEER_PATH }, detached: true });
        child = running;
        children.add(running);
        running.stdout.pipe(channel, { end: false });
        running.stderr.pipe(channel.stderr, { end: false });
        channel.pipe(running.stdin);
        // Like sshd: a closed channel only closes the pipes; the process lives on until it writes or is killed.
        channel.once('close', () => {
          running.stdout.destroy();
          running.stderr.destroy();
          running.stdin.destroy();
        });
        running.once('close', (code, signal) => {
          children.delete(running);
          if (signal) channel.exit(signal.replace(/^SIG/, ''), false, '');
          else channel.exit(code ?? 255);
          channel.end();
        });
      });
    });
    client.on('error', () => undefined);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    host: hostFor(address.port),
    privateKey: Buffer.from(clientKeys.private),
    hostKey: keyWithoutComment(hostKeys.public),
    kind: 'ssh2',
    async close() {
      for (const child of children) child.kill('SIGKILL');
      for (const client of clients) client.end();
      await new Promise((ok) => server.close(ok));
    },
  };
}
