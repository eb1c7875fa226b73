// Two real `nomos serve` processes sealing one PostgreSQL log: one sealer at a time; `kill -9` of the sealer while
// it seals thousands of events leaves no fork and no gap — the other server takes the lease over and the tree
// ends with every event exactly once, in position order, every checkpoint a prefix of the last. Needs PostgreSQL
// (two processes cannot share an embedded PGlite directory): without DATABASE_URL the suite says it is skipped.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlEventStore } from '../../src/adapters/eventstore/sql.ts';
import { readSigningKey } from '../../src/log/keys.ts';
import { leafOf } from '../../src/log/leaf.ts';
import { leafHash, rootOfLeaves, verifyConsistency } from '../../src/log/merkle.ts';
import { openNote } from '../../src/log/note.ts';
import { eventsBetween } from '../../src/log/store.ts';
import { execNomos } from '../support/cli-process.ts';
import { postgresDatabase, type TestDb } from '../support/databases.ts';
import { type ServeProcess, startServeProcess } from '../support/serve-process.ts';
import { until } from '../support/until.ts';

const LEADS = 'this server seals now';
const b64 = (s: string) => Buffer.from(s, 'base64');

describe.skipIf(postgresDatabase === null)('two servers sealing one log (skipped without DATABASE_URL: two processes cannot share PGlite)', () => {
  let testDb: TestDb;
  let env: Record<string, string>;
  let keyFile: string;
  const servers: ServeProcess[] = [];

  beforeAll(async () => {
    testDb = await postgresDatabase!.open();
    const dir = mkdtempSync(join(tmpdir(), 'nomos-seal-'));
    keyFile = join(dir, 'signing-key.pem');
    const made = await execNomos(['keygen', keyFile], {});
    expect(made.code).toBe(0);
    expect(made.stdout).toContain('verifier key: nomos/');
    env = { DATABASE_URL: testDb.url!, NOMOS_SIGNING_KEY: keyFile, NOMOS_SEAL_MS: '50', NOMOS_CHECKPOINT_EVERY: '500,1s', NOMOS_DATA_DIR: join(dir, 'unused') };
    servers.push(await startServeProcess(env), await startServeProcess(env));
  }, 90_000);

  afterAll(async () => {
    for (const s of servers) await s.stop('SIGKILL');
    await testDb?.close();
  });

  it('has one sealer; killed mid-seal, the other takes over with no fork and no gap', async () => {
    const leader = await until('a sealer', () => Promise.resolve(servers.find((s) => s.output().includes(LEADS))), 20_000);
    const standby = servers.find((s) => s !== leader)!;
    expect(standby.output()).not.toContain(LEADS);
    // Thousands of events at once from several writers, so that the kill lands while the sealer works through them.
    const stores = [0, 1, 2, 3].map(() => new SqlEventStore(testDb.db));
    await Promise.all(stores.map((store, w) => (async () => {
      for (let i = 0; i < 30; i++) await store.append(`bulk-${w}-${i}`, Array.from({ length: 50 }, (_, n) => ({ type: 'Noted', data: { w, i, n }, metadata: {} })), { expectedVersion: 'any' });
    })()));
    for (const store of stores) await store.close();
    await until('the sealer under way', async () => ((await leader.request('GET', '/log')).body.tree_size > 0 ? true : undefined), 20_000, 10);
    await leader.stop('SIGKILL');
    await until('the other server sealing', () => Promise.resolve(standby.output().includes(LEADS) ? true : undefined), 20_000);
    const log = await until('every event sealed and checkpointed', async () => {
      const state = (await standby.request('GET', '/log')).body;
      return state.lag_events === 0 && state.checkpoint?.tree_size === state.tree_size && state.tree_size >= 6_000 ? state : undefined;
    }, 60_000);

    const events = await eventsBetween(testDb.db, 0, Number.MAX_SAFE_INTEGER, 100_000);
    expect(log.tree_size).toBe(events.length);
    const { rows } = await testDb.db.query<{ n: number; distinct: number; top: number }>('SELECT count(*)::int AS n, count(DISTINCT position)::int AS distinct, max(leaf_index)::int AS top FROM log_leaves');
    expect(rows[0]).toEqual({ n: events.length, distinct: events.length, top: events.length - 1 });
    const leaves = events.map((e) => leafHash(leafOf(e)));
    const root = rootOfLeaves(leaves);
    expect(b64(log.checkpoint.root).equals(root)).toBe(true);
    // Every checkpoint either server signed is a prefix of the final tree, under the one key.
    const key = await readSigningKey(keyFile);
    const { checkpoints } = (await standby.request('GET', '/log/checkpoints?limit=1000')).body as { checkpoints: { tree_size: number; root: string; note: string }[] };
    expect(checkpoints.length).toBeGreaterThan(1);
    for (const c of checkpoints) {
      expect(openNote(c.note, log.origin, key).checkpoint.size).toBe(c.tree_size);
      expect(b64(c.root).equals(rootOfLeaves(leaves.slice(0, c.tree_size)))).toBe(true);
      const proof = (await standby.request('GET', `/log/proof/consistency?from=${c.tree_size}&to=${log.tree_size}`)).body;
      expect(verifyConsistency(c.tree_size, log.tree_size, b64(c.root), root, (proof.hashes as string[]).map(b64))).toBe(true);
    }
  }, 150_000);
});
