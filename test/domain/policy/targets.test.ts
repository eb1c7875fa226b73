// Target globs: `*` stands for any run of characters in a slug; anything else is compared exactly.
import { describe, expect, it } from 'vitest';
import { coversTarget, targetMatches } from '../../../src/domain/policy/index.ts';

const SLUGS = ['host:strong', 'host:str', 'host:weak', 'lxc:app', 'lxc:app-2', 'vm:app', 'lxc:strong'];

const matched = (pattern: string): string[] => SLUGS.filter((slug) => targetMatches(pattern, slug));

describe('targetMatches', () => {
  it.each([
    ['*', SLUGS],
    ['lxc:*', ['lxc:app', 'lxc:app-2', 'lxc:strong']],
    ['host:str*', ['host:strong', 'host:str']],
    ['host:strong', ['host:strong']],
    ['host:str', ['host:str']],
    ['*:app', ['lxc:app', 'vm:app']],
    ['*strong', ['host:strong', 'lxc:strong']],
    ['*app*', ['lxc:app', 'lxc:app-2', 'vm:app']],
    ['lxc:a*p', ['lxc:app']],
    ['**', SLUGS],
    ['host:', []],
    ['lxc:app.', []],
    ['LXC:*', []],
  ])('%s', (pattern, slugs) => {
    expect(matched(pattern)).toEqual(slugs);
  });

  it('reads the glob literally otherwise: dots and dashes are no wildcards', () => {
    expect(targetMatches('lxc:a.p', 'lxc:app')).toBe(false);
    expect(targetMatches('lxc:app-2', 'lxc:app-2')).toBe(true);
  });

  it('stays fast with many stars against a slug that almost matches', () => {
    const pattern = `${'*a'.repeat(40)}*b`;
    const started = performance.now();
    expect(targetMatches(pattern, `lxc:${'a'.repeat(63)}`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(50);
  });

  it('a rule covers a target when any of its patterns matches', () => {
    expect(coversTarget(['lxc:*', 'host:strong'], 'host:strong')).toBe(true);
    expect(coversTarget(['lxc:*', 'host:strong'], 'host:weak')).toBe(false);
  });
});
