// The sed script reader: which scripts write files or run commands, and which it cannot read.
import { describe, expect, it } from 'vitest';
import { sedEffects } from '../../../src/domain/risk/sed.ts';

describe('sedEffects', () => {
  it.each([
    ['s/a/b/', { writes: false, runs: false }],
    ['s/x/the /', { writes: false, runs: false }],
    ['s|/usr|/opt|g', { writes: false, runs: false }],
    ['/start/,/end/{/x/d}', { writes: false, runs: false }],
    [':a;N;$!ba;s/\\n/ /g', { writes: false, runs: false }],
    ['$a appended text', { writes: false, runs: false }],
    ['y/abc/xyz/', { writes: false, runs: false }],
    ['1,20p', { writes: false, runs: false }],
    ['s/a/b/w /dev/stdout', { writes: false, runs: false }],
    ['w out.txt', { writes: true, runs: false }],
    ['/x/W out.txt', { writes: true, runs: false }],
    ['s/a/b/gw changed.txt', { writes: true, runs: false }],
    ['s/.*/rm &/e', { writes: false, runs: true }],
    ['1e reboot', { writes: false, runs: true }],
    ['/x/{e date\n}', { writes: false, runs: true }],
  ])('%j → %j', (script, effects) => {
    expect(sedEffects(script)).toEqual(effects);
  });

  it.each([['s/a/b'], ['k'], ['/unclosed']])('cannot read %j', (script) => {
    expect(sedEffects(script)).toBeUndefined();
  });
});
