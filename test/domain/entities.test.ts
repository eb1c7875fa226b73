// Which entity slugs a tool call touched: only the entity-bearing argument names, only kind:name values.
import { describe, expect, it } from 'vitest';
import { entitySlugsIn } from '../../src/domain/session/entities.ts';

const rows: Array<[name: string, args: Record<string, unknown>, expected: string[]]> = [
  ['run on a host', { command: 'uptime', target: 'host:strong' }, ['host:strong']],
  ['several targets', { targets: ['lxc:rclone', 'vm:zimaos', 'lxc:rclone'] }, ['lxc:rclone', 'vm:zimaos']],
  ['relationship ends', { from: 'lxc:nfs-export', to: 'pool:ludo-lvm', type: 'exports' }, ['lxc:nfs-export', 'pool:ludo-lvm']],
  ['knowledge about entities', { about: ['host:strong', 'pool:ludo-lvm'], entity: 'vm:zimaos', parent: 'host:hubris' }, ['host:hubris', 'host:strong', 'pool:ludo-lvm', 'vm:zimaos']],
  ['slug and entities', { slug: 'host:netbird-vps', entities: ['host:netbird-vps', 'lxc:jellyfin'] }, ['host:netbird-vps', 'lxc:jellyfin']],
  ['names with dots, @ and capitals', { target: 'svc:Traefik.v2@edge' }, ['svc:Traefik.v2@edge']],
  ['URLs, paths and bare words are not slugs', { target: 'http://192.168.8.214:5572/rc', to: '/mnt/library', from: 'strong', about: 'Host:strong' }, []],
  ['other argument names are ignored', { command: 'ssh host:hubris', path: 'host:strong', name: 'lxc:rclone' }, []],
  ['non-string values are ignored', { target: 42, targets: [null, { slug: 'host:x' }, 'host:y'], entity: true }, ['host:y']],
  ['no args', {}, []],
];

describe('entitySlugsIn', () => {
  it.each(rows)('%s', (_name, args, expected) => {
    expect(entitySlugsIn(args)).toEqual(expected);
  });
});
