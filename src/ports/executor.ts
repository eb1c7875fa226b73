// The executor port: runs one shell command on a fleet target over SSH and reports what it printed and how it
// ended. The command layer decides whether a command may run; the executor only runs it, exactly as given.
// The adapter is src/adapters/ssh.

/** An SSH-reachable Proxmox host, as the inventory knows it. */
export interface SshHost {
  /** Inventory slug, e.g. host:strong (used for pooling and messages). */
  readonly slug: string;
  readonly address: string;
  readonly port: number;
  readonly user: string;
  /** The pinned host key ("ssh-ed25519 AAAA…"), or null to accept and report the key on first connection. */
  readonly hostKey: string | null;
}

/** Where the command runs: on the host itself, or inside one of its LXC containers or VMs. */
export type ExecTarget =
  | { readonly kind: 'host'; readonly host: SshHost }
  | { readonly kind: 'lxc'; readonly host: SshHost; readonly pveId: number }
  | { readonly kind: 'vm'; readonly host: SshHost; readonly pveId: number };

export interface ExecResult {
  readonly exitCode: number | null;
  /** Set when the process ended by a signal (e.g. killed at the hard limit). */
  readonly signal: string | null;
  /** The last bytes of each stream (bounded), as UTF-8 text. */
  readonly stdoutTail: string;
  readonly stderrTail: string;
  readonly timedOut: boolean;
}

export type LiveState = 'running' | 'hung' | 'exited';

export interface ExecHandle {
  /** The key the host presented, as "type base64"; the caller pins it when the host had none. */
  readonly hostKey: string;
  /** Settles when the command ends (or is killed at the hard limit). Never rejects for a non-zero exit. */
  readonly result: Promise<ExecResult>;
  /** What it printed so far (bounded tails). */
  output(): { stdout: string; stderr: string };
  /** Milliseconds since the command last printed anything (or since it started). */
  idleMs(): number;
  /**
   * Looks at the remote process: 'hung' when it (or a child) stays in uninterruptible sleep (ps state D) without
   * running — seen twice a moment apart, not once (a moment's disk wait or vfork is state D too).
   */
  probe(): Promise<LiveState>;
  /** Ends the remote process (and its children). */
  kill(): Promise<void>;
}

export interface Executor {
  /**
   * Starts the command; resolves once it runs remotely. Rejects with HostKeyMismatchError when the host
   * presents another key than the pinned one (nothing runs), or ExecutorConnectError when it cannot connect.
   */
  start(target: ExecTarget, command: string, options: { hardLimitMs: number }): Promise<ExecHandle>;
  close(): Promise<void>;
}

export class HostKeyMismatchError extends Error {
  readonly code = 'host_key_mismatch';
  constructor(
    readonly host: string,
    readonly expected: string,
    readonly presented: string,
  ) {
    super(`${host} presented host key ${presented.slice(0, 40)}… but ${expected.slice(0, 40)}… is pinned: refusing to connect`);
    this.name = 'HostKeyMismatchError';
  }
}

export class ExecutorConnectError extends Error {
  readonly code = 'connect_failed';
  constructor(
    readonly host: string,
    message: string,
  ) {
    super(`cannot reach ${host}: ${message}`);
    this.name = 'ExecutorConnectError';
  }
}
