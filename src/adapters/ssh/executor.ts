// The SSH adapter of the executor port: runs commands on Proxmox hosts, in their LXC containers (pct exec) and in
// their VMs (qm guest exec), over pooled ssh2 connections with pinned host keys.
//
// Live handling per target kind:
// - host, lxc: the wrapper reports the command's PID (in the container's PID namespace for lxc); probe() reads the
//   process table there (through `pct exec` for lxc) and says 'hung' when a process of the command's tree is in
//   state D in two tables read a second apart, with no CPU time spent between them; kill() stops then kills that tree, and the hard limit does the same.
// - vm: `qm guest exec` only reports when the command ended, so output() and idleMs() see nothing until then, and
//   the guest's process table is not probed: probe() looks at the `qm` process on the host (running or exited,
//   never 'hung' for what happens inside the guest). The hard limit is passed to qm as --timeout; when qm gives
//   up it reports the guest PID, which is then killed (with its process group if it leads one) through the guest
//   agent. kill() before that ends only the host's qm process; the guest command runs on.

import type { ExecHandle, ExecTarget, Executor } from '../../ports/executor.ts';
import { SshExecHandle } from './handle.ts';
import { SshPool } from './pool.ts';
import { commandLine, type RemoteTarget } from './remote-command.ts';

export interface SshExecutorOptions {
  /** The client's private key (the contents of the file NOMOS_SSH_KEY names). */
  readonly privateKey: Buffer | string;
  /** Default 10 s. */
  readonly connectTimeoutMs?: number;
  /** Bytes kept of each stream's tail. Default 16 KiB. */
  readonly tailBytes?: number;
  /** SSH keepalive interval; a connection missing `keepaliveCountMax` answers in a row is dropped. Default 15 s, 3. */
  readonly keepaliveIntervalMs?: number;
  readonly keepaliveCountMax?: number;
  /** An unused connection is closed after this long. Default 60 s. */
  readonly idleCloseMs?: number;
  /** Default 10, OpenSSH's default MaxSessions. */
  readonly maxChannelsPerConnection?: number;
  /** How long a probe or kill may take; a host too stuck to answer one is reported, not waited for. Default 10 s. */
  readonly controlTimeoutMs?: number;
}

/** Output of probes and kills is a process table; anything beyond this is not one. */
const CONTROL_OUTPUT_LIMIT = 8 * 1024 * 1024;
/** qm guest exec's JSON: the guest agent caps each stream at 16 MiB, and JSON escaping can grow it. */
const QM_OUTPUT_LIMIT = 64 * 1024 * 1024;

export class SshExecutor implements Executor {
  private readonly pool: SshPool;
  private readonly tailBytes: number;
  private readonly controlTimeoutMs: number;

  constructor(options: SshExecutorOptions) {
    this.tailBytes = options.tailBytes ?? 16 * 1024;
    this.controlTimeoutMs = options.controlTimeoutMs ?? 10_000;
    this.pool = new SshPool({
      privateKey: options.privateKey,
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      keepaliveIntervalMs: options.keepaliveIntervalMs ?? 15_000,
      keepaliveCountMax: options.keepaliveCountMax ?? 3,
      idleCloseMs: options.idleCloseMs ?? 60_000,
      maxChannelsPerConnection: options.maxChannelsPerConnection ?? 10,
    });
  }

  /** SSH connections opened so far, reconnects included (pooling is observable through it). */
  get connectionsOpened(): number {
    return this.pool.connectionsOpened;
  }

  async start(target: ExecTarget, command: string, options: { hardLimitMs: number }): Promise<ExecHandle> {
    const remote = remoteTarget(target);
    const line = commandLine(remote, command, { qmTimeoutSeconds: Math.max(1, Math.ceil(options.hardLimitMs / 1000)) });
    const { channel, hostKey } = await this.pool.exec(target.host, line);
    return new SshExecHandle(channel, {
      target: remote,
      hostKey,
      tailBytes: this.tailBytes,
      qmOutputLimitBytes: QM_OUTPUT_LIMIT,
      hardLimitMs: options.hardLimitMs,
      runControl: (controlLine) => this.runControl(target, controlLine),
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /** Runs a probe or kill to its end on the target's host and returns its stdout. */
  private async runControl(target: ExecTarget, line: string): Promise<string> {
    const { channel } = await this.pool.exec(target.host, line);
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const timer = setTimeout(() => {
        reject(new Error(`${target.host.slug}: probe or kill did not finish within ${this.controlTimeoutMs} ms`));
        channel.close();
      }, this.controlTimeoutMs);
      channel.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= CONTROL_OUTPUT_LIMIT) chunks.push(chunk);
      });
      channel.stderr.resume();
      channel.once('close', () => {
        clearTimeout(timer);
        resolve(Buffer.concat(chunks).toString('utf8'));
      });
      channel.end();
    });
  }
}

function remoteTarget(target: ExecTarget): RemoteTarget {
  switch (target.kind) {
    case 'host':
      return { kind: 'host' };
    case 'lxc':
    case 'vm':
      return { kind: target.kind, pveId: target.pveId };
    default: {
      const never: never = target;
      return never;
    }
  }
}
