// The host probe adapter: with the executor's key, an SSH handshake and login that opens no channel, so nothing
// runs on the host; without a key, a TCP connection that waits for the SSH server's greeting. A pinned host
// key is checked as the executor checks it; a host without one is not pinned by a probe.
import { connect } from 'node:net';
import { Client } from 'ssh2';
import { ExecutorConnectError, HostKeyMismatchError, type SshHost } from '../../ports/executor.ts';
import type { HostProbe } from '../../ports/host-probe.ts';
import { formatHostKey, matchesPinnedKey } from './host-key.ts';

export function hostProbe(privateKey: Buffer | string | null): HostProbe {
  return privateKey === null ? { kind: 'tcp', reach: greeting } : { kind: 'ssh', reach: (host, timeoutMs) => handshake(host, privateKey, timeoutMs) };
}

function handshake(host: SshHost, privateKey: Buffer | string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    let mismatch: string | null = null;
    let settled = false;
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      client.end();
      if (error) reject(error);
      else resolve();
    };
    client.once('ready', () => settle(null));
    client.on('error', (error) => {
      if (host.hostKey !== null && mismatch !== null) settle(new HostKeyMismatchError(host.slug, host.hostKey, mismatch));
      else settle(new ExecutorConnectError(host.slug, error.message));
    });
    client.once('close', () => settle(new ExecutorConnectError(host.slug, 'connection closed during the handshake')));
    client.connect({
      host: host.address,
      port: host.port,
      username: host.user,
      privateKey,
      readyTimeout: timeoutMs,
      hostVerifier: (blob: Buffer) => {
        const ok = host.hostKey === null || matchesPinnedKey(host.hostKey, blob);
        if (!ok) mismatch = formatHostKey(blob);
        return ok;
      },
    });
  });
}

/** Connects and waits for "SSH-" from the server: something that speaks SSH listens there. */
function greeting(host: SshHost, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: host.address, port: host.port });
    let received = '';
    const fail = (message: string) => {
      socket.destroy();
      reject(new ExecutorConnectError(host.slug, message));
    };
    socket.setTimeout(timeoutMs, () => fail(`no SSH greeting within ${timeoutMs} ms`));
    socket.on('error', (error) => fail(error.message));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.startsWith('SSH-') || received.includes('\nSSH-')) {
        socket.destroy();
        resolve();
      } else if (received.length > 8192) fail('what answers on the port is not an SSH server');
    });
    socket.on('end', () => fail('the connection closed before an SSH greeting'));
  });
}
