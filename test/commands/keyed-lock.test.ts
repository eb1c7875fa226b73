import { describe, expect, it } from 'vitest';
import { KeyedLock } from '../../src/commands/keyed-lock.ts';

describe('KeyedLock', () => {
  it('runs work on one key one at a time, in arrival order, and keys independently', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const step = (key: string, n: number, ms: number) =>
      lock.run(key, async () => {
        log.push(`${key}${n}+`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`${key}${n}-`);
        return n;
      });
    const results = await Promise.all([step('a', 1, 20), step('a', 2, 1), step('b', 1, 5)]);
    expect(results).toEqual([1, 2, 1]);
    // a2 starts only after a1 ended; b1 runs meanwhile.
    expect(log.indexOf('a2+')).toBeGreaterThan(log.indexOf('a1-'));
    expect(log.indexOf('b1+')).toBeLessThan(log.indexOf('a1-'));
  });

  it('keeps going after a failure and reports it to its caller only', async () => {
    const lock = new KeyedLock();
    const failed = lock.run('k', () => Promise.reject(new Error('boom')));
    const next = lock.run('k', () => Promise.resolve('ok'));
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ok');
  });
});
