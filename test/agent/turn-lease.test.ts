// The turn lease on a real database: one holder per session, refused naming it, taken over once it lapses,
// and a cancel asked anywhere reaching the holder.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnLeases, TurnRunning } from '../../src/agent/turn-lease.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { until } from '../support/until.ts';

describe.each(databases)('turn leases on $name', (database) => {
  let testDb: TestDb;
  let a: TurnLeases;
  let b: TurnLeases;
  beforeAll(async () => {
    testDb = await database.open();
    a = new TurnLeases(testDb.db, 'server-a', { ttlMs: 600, renewMs: 100 });
    b = new TurnLeases(testDb.db, 'server-b', { ttlMs: 600, renewMs: 100 });
  });
  afterAll(() => testDb?.close());

  it('holds one turn per session: another holder is refused, naming the holder, until it is released', async () => {
    const session = randomUUID();
    const held = await a.acquire(session, 't1');
    const refused = await b.acquire(session, 't2').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TurnRunning);
    expect((refused as TurnRunning).message).toContain('server-a');
    expect((refused as TurnRunning).rule).toBe('turn_running');
    // Renewals keep it past its ttl.
    await new Promise((r) => setTimeout(r, 900));
    await expect(b.acquire(session, 't2')).rejects.toBeInstanceOf(TurnRunning);
    expect(held.signal.aborted).toBe(false);
    await held.release();
    const next = await b.acquire(session, 't2');
    expect(await a.holderOf(session)).toEqual({ holder: 'server-b', turnId: 't2' });
    await next.release();
    expect(await a.holderOf(session)).toBeNull();
  });

  it('a lease whose holder stopped renewing lapses; the next holder takes it and the old one learns it lost it', async () => {
    const session = randomUUID();
    const stale = new TurnLeases(testDb.db, 'server-dead', { ttlMs: 300, renewMs: 60_000 });
    const dead = await stale.acquire(session, 't1');
    await new Promise((r) => setTimeout(r, 400));
    const taken = await b.acquire(session, 't2');
    expect(await b.holderOf(session)).toMatchObject({ holder: 'server-b' });
    await taken.release();
    await dead.release(); // deletes nothing of the new holder's
    const renewing = await a.acquire(session, 't3');
    // Taken over while a's renewals run: a's next renewal finds it gone.
    await testDb.db.query("UPDATE turn_leases SET turn_id = 't4', holder = 'server-b' WHERE session_id = $1", [session]);
    await until('a to learn it lost the lease', () => Promise.resolve(renewing.signal.aborted ? true : undefined), 5_000, 20);
    expect(renewing.reason()).toBe('lost');
    await renewing.release();
  });

  it('a turn that has ended in the log hands its lease over at once, and only that turn', async () => {
    const session = randomUUID();
    const ending = await a.acquire(session, 't1');
    // Not the turn that holds it: nothing changes.
    expect(await b.takeOverEnded(session, 't0', 't2')).toBeNull();
    expect(await b.holderOf(session)).toEqual({ holder: 'server-a', turnId: 't1' });
    const next = await b.takeOverEnded(session, 't1', 't2');
    expect(next).not.toBeNull();
    expect(await a.holderOf(session)).toEqual({ holder: 'server-b', turnId: 't2' });
    await ending.release(); // the old holder's release deletes nothing of the new one's
    expect(await a.holderOf(session)).toEqual({ holder: 'server-b', turnId: 't2' });
    await next!.release();
    expect(await a.holderOf(session)).toBeNull();
  });

  it('a cancel asked through any server reaches the holder', async () => {
    const session = randomUUID();
    const held = await a.acquire(session, 't1');
    await b.requestCancel(session);
    await until('the holder to see the cancel', () => Promise.resolve(held.signal.aborted ? true : undefined), 5_000, 20);
    expect(held.reason()).toBe('cancelled');
    await held.release();
  });
});
