import { describe, expect, it } from 'vitest';
import { inventoryEffects } from '../../src/domain/entity/follow.ts';

describe('inventoryEffects', () => {
  it.each([
    [['pct create 140 local:vztmpl/debian-12.tar.zst --hostname typetype --cores 2'], [{ kind: 'created', pveId: 140, hostname: 'typetype' }]],
    [['pct create 141 tmpl --hostname=media --memory 512'], [{ kind: 'created', pveId: 141, hostname: 'media' }]],
    [['pct destroy 132'], [{ kind: 'destroyed', pveId: 132 }]],
    [['pct destroy 132 --purge', 'pct create 133 t --hostname x'], [{ kind: 'destroyed', pveId: 132 }, { kind: 'created', pveId: 133, hostname: 'x' }]],
    [['pct create 140 tmpl'], []], // no hostname: nothing to name the container by
    [['pct status 132', 'pct exec 132 -- ls'], []],
    [['pct create abc tmpl --hostname x'], []],
    [['qm destroy 101'], []],
  ] as const)('%j → %j', (commands, effects) => {
    expect(inventoryEffects(commands)).toEqual(effects);
  });
});
