// Commands known to run for minutes or hours: a later part waits for them differently instead of timing them out.
import type { Invocation } from './args.ts';
import { named, positionals, subcommand, values } from './args.ts';

export function isLongRunning(inv: Invocation): boolean {
  const [first, second] = positionals(inv);
  if (named('apt', 'apt-get')(inv)) return ['upgrade', 'install', 'dist-upgrade', 'full-upgrade'].includes(subcommand(inv) ?? '');
  if (named('pct', 'qm')(inv)) return first === 'migrate';
  if (named('rclone')(inv)) return ['sync', 'copy', 'move'].includes(subcommand(inv) ?? '');
  if (named('zfs')(inv)) return ['send', 'recv', 'receive'].includes(subcommand(inv) ?? '');
  if (named('dd')(inv)) return true;
  const action = inv.name === 'docker-compose' ? first : first === 'compose' ? second : undefined;
  if (named('docker', 'docker-compose')(inv)) return action === 'pull' || (action === 'up' && values(inv).includes('--build'));
  return false;
}
