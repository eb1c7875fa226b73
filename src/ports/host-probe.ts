// The host probe port: whether a fleet host answers, without running anything on it. The reachability check
// (src/fleet/reachability.ts) uses it; the adapter is src/adapters/ssh/handshake.ts.
import type { SshHost } from './executor.ts';

export interface HostProbe {
  /** What a probe proves: an SSH login (`ssh`) or an SSH server's greeting on the port (`tcp`). */
  readonly kind: 'ssh' | 'tcp';
  /** Resolves when the host answered within `timeoutMs`; rejects with an error that says why not. */
  reach(host: SshHost, timeoutMs: number): Promise<void>;
}
