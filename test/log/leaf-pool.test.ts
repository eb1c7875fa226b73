// The chain check's leaf threads (src/log/leaf-pool.ts): the hashes they return are the leaves this thread
// computes, in the order asked across threads; a page they cannot hash fails, never passes as hashes.
import { afterEach, describe, expect, it } from 'vitest';
import { type RawLeafEvent, leafColumns, rawLeafHashes } from '../support/leaf-columns.ts';
import { LeafPool } from '../../src/log/leaf-pool.ts';

const event = (position: number, data: unknown): RawLeafEvent => ({
  position,
  stream: `session-${position % 3}`,
  version: position,
  type: 'MessagePosted',
  recordedAt: '2026-12-06T23:05:55.468664Z',
  metadataJson: JSON.stringify({ actor: { role: 'operator', id: 'op' } }),
  dataJson: JSON.stringify(data),
});

describe('LeafPool', () => {
  let pool: LeafPool | null = null;
  afterEach(async () => pool?.close());

  it('hashes pages on its threads as this thread does, each answer to its page', async () => {
    pool = new LeafPool(2);
    const pages = Array.from({ length: 6 }, (_, p) => Array.from({ length: 1 + p * 3 }, (_, i) => event(p * 100 + i + 1, { text: `message ${p}.${i}`, n: i })));
    const hashed = await Promise.all(pages.map((page) => pool!.hash(leafColumns(page))));
    hashed.forEach((hashes, p) => expect(hashes.equals(rawLeafHashes(pages[p]!)), `page ${p}`).toBe(true));
  });

  it('fails a page it cannot hash, naming why, and keeps hashing others', async () => {
    pool = new LeafPool(1);
    const broken = { ...event(1, {}), dataJson: '{"not json' };
    await expect(pool.hash(leafColumns([event(2, { a: 1 }), broken]))).rejects.toThrow(/a leaf thread could not hash a page: .*JSON/);
    const good = [event(3, { a: 1 })];
    expect((await pool.hash(leafColumns(good))).equals(rawLeafHashes(good))).toBe(true);
  });

  it('rejects what it holds when closed', async () => {
    pool = new LeafPool(1);
    const refused = expect(pool.hash(leafColumns([event(1, { a: 1 })]))).rejects.toThrow(/closed/);
    await pool.close();
    await refused;
    await expect(pool.hash(leafColumns([event(2, {})]))).rejects.toThrow();
    pool = null;
  });
});
