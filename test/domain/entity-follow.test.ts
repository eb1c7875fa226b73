import { describe, expect, it } from 'vitest';
import { inventoryEffect } from '../../src/domain/entity/follow.ts';

describe('inventoryEffect', () => {
  it.each([
    ['pct create 140 local:vztmpl/debian-12.tar.zst --hostname typetype --cores 2', { kind: 'created', pveId: 140, hostname: 'typetype' }],
    ['pct create 141 tmpl --hostname=media --memory 512', { kind: 'created', pveId: 141, hostname: 'media' }],
    ["pct create 142 tmpl --hostname 'quoted'", { kind: 'created', pveId: 142, hostname: 'quoted' }],
    ['sudo pct create 143 tmpl --hostname box', { kind: 'created', pveId: 143, hostname: 'box' }],
    ['pct destroy 132', { kind: 'destroyed', pveId: 132 }],
    ['pct destroy 132 --purge', { kind: 'destroyed', pveId: 132 }],
  ] as const)('%s → %j', (command, effect) => {
    expect(inventoryEffect(command)).toEqual(effect);
  });

  // Anything but that one simple command: its success says nothing about whether pct ran (or ran as read).
  it.each([
    'true || pct create 999 tmpl --hostname box',
    'false && pct create 999 tmpl --hostname box',
    'pct create 999 tmpl --hostname box; true',
    'echo $(pct create 999 tmpl --hostname box)',
    'pct create 999 tmpl --hostname box | cat',
    '! pct create 999 tmpl --hostname box',
    'pct create 999 tmpl --hostname box &',
    'pct create 999 tmpl --hostname box > /dev/null',
    'X=1 pct create 999 tmpl --hostname box',
    'pct create 999 tmpl --hostname $NAME',
    'if true; then pct create 999 tmpl --hostname box; fi',
    '{ pct create 999 tmpl --hostname box; }',
    'timeout 60 pct create 999 tmpl --hostname box',
    'pct destroy 132 || pct destroy 133',
    'pct create 140 tmpl', // no hostname: nothing to name the container by
    'pct status 132',
    'pct create abc tmpl --hostname x',
    'qm destroy 101',
    'pct create 999 tmpl --hostname "unterminated',
  ])('%s → nothing', (command) => {
    expect(inventoryEffect(command)).toBeNull();
  });
});
