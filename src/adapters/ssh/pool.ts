// SSH connections shared by the commands that run on one host: each command is an exec channel on a pooled
// connection. A connection is keyed by everything it was verified against (address, user and the pinned key),
// so re-pinning a host never reuses a connection that was accepted under the old pin.

import { Client, type ClientChannel } from 'ssh2';
import { ExecutorConnectError, HostKeyMismatchError, type SshHost } from '../../ports/executor.ts';
import { formatHostKey, matchesPinnedKey } from './host-key.ts';

export interface PoolOptions {
  readonly privateKey: Buffer | string;
  readonly connectTimeoutMs: number;
  readonly keepaliveIntervalMs: number;
  readonly keepaliveCountMax: number;
  /** A connection without channels for this long is closed. */
  readonly idleCloseMs: number;
  /**
   * Channels per connection before another connection is opened. OpenSSH refuses more than MaxSessions (10 by
   * default) per connection; opening another connection instead of queueing means a probe or kill still gets
   * through when every channel holds a hung command.
   */
  readonly maxChannelsPerConnection: number;
}

interface Connection {
  readonly client: Client;
  /** The key the host presented, "type base64". */
  readonly hostKey: string;
  channels: number;
  closed: boolean;
  idleTimer: NodeJS.Timeout | null;
}

export interface ExecChannel {
  readonly channel: ClientChannel;
  readonly hostKey: string;
}

function poolKey(host: SshHost): string {
  return JSON.stringify([host.slug, host.address, host.port, host.user, host.hostKey]);
}

export class SshPool {
  private readonly connections = new Map<string, Connection[]>();
  private readonly connecting = new Map<string, Promise<Connection>>();
  private opened = 0;
  private closing = false;

  constructor(private readonly options: PoolOptions) {}

  /** How many SSH connections this pool has opened so far (reconnects included). */
  get connectionsOpened(): number {
    return this.opened;
  }

  /** Opens an exec channel running `line` on the host. Rejects with the executor's connect or host key errors. */
  async exec(host: SshHost, line: string): Promise<ExecChannel> {
    const connection = await this.reserve(host);
    try {
      const channel = await new Promise<ClientChannel>((resolve, reject) => {
        connection.client.exec(line, (error, channel) => (error ? reject(error) : resolve(channel)));
      });
      channel.once('close', () => this.release(connection));
      return { channel, hostKey: connection.hostKey };
    } catch (error) {
      this.release(connection);
      throw new ExecutorConnectError(host.slug, error instanceof Error ? error.message : String(error));
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.allSettled([...this.connecting.values()]);
    await Promise.all([...this.connections.values()].flat().map((connection) => this.end(connection)));
  }

  private async reserve(host: SshHost): Promise<Connection> {
    const key = poolKey(host);
    for (;;) {
      if (this.closing) throw new ExecutorConnectError(host.slug, 'the executor is closed');
      const free = this.connections.get(key)?.find((c) => !c.closed && c.channels < this.options.maxChannelsPerConnection);
      if (free) {
        free.channels++;
        if (free.idleTimer) clearTimeout(free.idleTimer);
        free.idleTimer = null;
        return free;
      }
      await (this.connecting.get(key) ?? this.connect(host, key));
    }
  }

  private release(connection: Connection): void {
    connection.channels--;
    if (connection.channels > 0 || connection.closed) return;
    connection.idleTimer = setTimeout(() => void this.end(connection), this.options.idleCloseMs);
    connection.idleTimer.unref();
  }

  private connect(host: SshHost, key: string): Promise<Connection> {
    const attempt = new Promise<Connection>((resolve, reject) => {
      const client = new Client();
      let presented: string | null = null;
      let mismatch = false;
      client.once('ready', () => {
        const connection: Connection = { client, hostKey: presented ?? '', channels: 0, closed: false, idleTimer: null };
        client.once('close', () => this.forget(key, connection));
        this.connections.set(key, [...(this.connections.get(key) ?? []), connection]);
        resolve(connection);
      });
      // After 'ready', errors end the connection and show up as its channels closing.
      client.on('error', (error) => {
        if (mismatch && host.hostKey !== null && presented !== null) reject(new HostKeyMismatchError(host.slug, host.hostKey, presented));
        else reject(new ExecutorConnectError(host.slug, error.message));
      });
      client.once('close', () => reject(new ExecutorConnectError(host.slug, 'connection closed during the handshake')));
      this.opened++;
      client.connect({
        host: host.address,
        port: host.port,
        username: host.user,
        privateKey: this.options.privateKey,
        readyTimeout: this.options.connectTimeoutMs,
        keepaliveInterval: this.options.keepaliveIntervalMs,
        keepaliveCountMax: this.options.keepaliveCountMax,
        hostVerifier: (blob: Buffer) => {
          presented = formatHostKey(blob);
          mismatch = host.hostKey !== null && !matchesPinnedKey(host.hostKey, blob);
          return !mismatch;
        },
      });
    });
    this.connecting.set(key, attempt);
    const settled = (): void => void this.connecting.delete(key);
    attempt.then(settled, settled);
    return attempt;
  }

  private forget(key: string, connection: Connection): void {
    connection.closed = true;
    if (connection.idleTimer) clearTimeout(connection.idleTimer);
    const rest = (this.connections.get(key) ?? []).filter((c) => c !== connection);
    if (rest.length > 0) this.connections.set(key, rest);
    else this.connections.delete(key);
  }

  private end(connection: Connection): Promise<void> {
    if (connection.closed) return Promise.resolve();
    // Closed at once, so no new channel is reserved on it while the SSH disconnect is under way.
    connection.closed = true;
    return new Promise((resolve) => {
      connection.client.once('close', () => resolve());
      connection.client.end();
    });
  }
}
