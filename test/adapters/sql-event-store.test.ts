// SqlEventStore on PGlite and PostgreSQL: the shared contract, the append-only trigger, and the reason the
// store reads in transaction order: a transaction that commits late must not be skipped by a live subscriber.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/ports/db.ts';
import { SqlEventStore } from '../../src/adapters/eventstore/sql.ts';
import type { StoredEvent } from '../../src/ports/event-store.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { eventStoreContract, newStream, waitFor } from './event-store.contract.ts';

/** A Db whose appends, once their rows are written, wait for `release` before they commit. */
function holdingCommits(db: Db) {
  let reached!: () => void;
  let release!: () => void;
  const workDone = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  // The append is one statement: run it in a transaction that stays open, with its rows written, until released.
  const held: Db = {
    ...db,
    query: <Row,>(sql: string, params?: readonly unknown[]) =>
      sql.includes('INSERT INTO events')
        ? db.transaction(async (tx) => {
            const result = await tx.query<Row>(sql, params);
            reached();
            await released;
            return result;
          })
        : db.query<Row>(sql, params),
  };
  return { db: held, workDone, release };
}

for (const database of databases) {
  eventStoreContract(`SqlEventStore (${database.name})`, async () => {
    const t = await database.open();
    const store = new SqlEventStore(t.db);
    return {
      store,
      async close() {
        await store.close();
        await t.close();
      },
    };
  });

  describe(`SqlEventStore on ${database.name}`, () => {
    let t: TestDb;
    let store: SqlEventStore;

    beforeAll(async () => {
      t = await database.open();
      store = new SqlEventStore(t.db);
    });
    afterAll(async () => {
      await store.close();
      await t.close();
    });

    it.each(['UPDATE events SET type = $1', 'DELETE FROM events WHERE type <> $1', 'TRUNCATE events'])(
      'refuses to change stored events: %s',
      async (sql) => {
        const stream = newStream();
        await store.append(stream, [{ type: 'Kept', data: { v: 1 }, metadata: {} }], { expectedVersion: 'no_stream' });
        const params = sql.includes('$1') ? ['Changed'] : [];
        await expect(t.db.query(sql, params)).rejects.toThrow(/events are append-only: (UPDATE|DELETE|TRUNCATE) refused/);
        const { events } = await store.readStream(stream);
        expect(events.map((e) => [e.type, e.data])).toEqual([['Kept', { v: 1 }]]);
      },
    );

    it('stores text PostgreSQL cannot hold (U+0000, a lone surrogate, in values and keys) as U+FFFD; pairs and literal backslashes stay', async () => {
      const stream = newStream();
      const data = { nul: 'a\u0000b', lone: 'model said \ud800 then \udc00', pair: 'ok 😀', ['k\udbff']: 'v', literal: '\\ud800 and \\u0000 as text' };
      await store.append(stream, [{ type: 'Odd', data, metadata: { note: 'x\ud83d' } }], { expectedVersion: 'no_stream' });
      const { events } = await store.readStream(stream);
      expect(events[0]!.data).toEqual({ nul: 'a\ufffdb', lone: 'model said \ufffd then \ufffd', pair: 'ok 😀', ['k\ufffd']: 'v', literal: '\\ud800 and \\u0000 as text' });
      expect(events[0]!.metadata).toEqual({ note: 'x\ufffd' });
    });

    it('remembers the events it appended, alone or in a group, as projectors read them, but not a large one', async () => {
      const fresh = new SqlEventStore(t.db);
      try {
        const before = (await fresh.head()).checkpoint;
        const [one, big] = [newStream(), newStream()];
        const meta = { occurred_at: '2026-12-03T00:00:00.000Z', actor: { id: 'op', role: 'operator' }, causation_id: 'c' };
        await fresh.append(one, [{ type: 'A', data: { n: 1 }, metadata: meta }, { type: 'B', data: { n: 2 }, metadata: meta }], { expectedVersion: 'no_stream' });
        await fresh.append(big, [{ type: 'Big', data: { text: 'x'.repeat(20_000) }, metadata: meta }], { expectedVersion: 'no_stream' });
        // Appends that arrive together go as one group statement.
        await Promise.all([newStream(), newStream(), newStream()].map((stream, i) => fresh.append(stream, [{ type: 'C', data: { n: i }, metadata: meta }], { expectedVersion: 'no_stream' })));
        const { events } = await fresh.readAllProjectedOn(t.db, { after: before, limit: 100 });
        // The guess is the log as projectors read it, less the large event; on one writer, exactly.
        expect(fresh.appendedAfter(before)).toEqual(events.filter((event) => event.type !== 'Big'));
        expect(events.map((event) => event.type)).toEqual(['A', 'B', 'Big', 'C', 'C', 'C']);
        expect(fresh.appendedAfter(events.at(-1)!.checkpoint)).toEqual([]);
        expect(fresh.logIn(t.db)).toBe(fresh);
        expect(fresh.logIn({ ...t.db })).toBeNull();
      } finally {
        await fresh.close();
      }
    });

    it('has no checkpoint for a position past the end of the log', async () => {
      const { position } = await store.append(newStream(), [{ type: 'A', data: {}, metadata: {} }], { expectedVersion: 'no_stream' });
      expect(await store.checkpointOf(position + 1000)).toBeNull();
    });

    it('changes() signals once LISTEN is ready, so an append that committed while it was being set up is not slept through', async () => {
      const fresh = new SqlEventStore(t.db);
      let fired = 0;
      const subscription = fresh.changes().subscribe(() => fired++);
      try {
        await waitFor(() => fired === 1, 'the readiness signal');
      } finally {
        subscription.unsubscribe();
        await fresh.close();
      }
    });

    it("tells another store's subscribers of an append, alone or in a group: by NOTIFY on PostgreSQL, directly on the embedded database", async () => {
      // Another store on the same database stands in for another process. On PostgreSQL only the NOTIFY reaches
      // it; the embedded database belongs to one process, which tells its stores without one.
      const other = new SqlEventStore(t.db);
      let fired = 0;
      const subscription = other.changes().subscribe(() => fired++);
      const event = { type: 'Heard', data: {}, metadata: {} };
      try {
        await waitFor(() => fired === 1, 'the readiness signal');
        await store.append(newStream(), [event], { expectedVersion: 'no_stream' });
        await waitFor(() => fired === 2, 'the NOTIFY of an append alone');
        // Appends that arrive together go as one statement: one NOTIFY for the group, at least one in all.
        await Promise.all(Array.from({ length: 8 }, () => store.append(newStream(), [event], { expectedVersion: 'no_stream' })));
        await waitFor(() => fired > 2, 'the NOTIFY of a group');
      } finally {
        subscription.unsubscribe();
        await other.close();
      }
    });

    it.skipIf(database.name === 'pglite')(
      'spaces its NOTIFYs: a steady stream of appends shares them, and the last append is always told (skipped on PGlite: no NOTIFY there)',
      async () => {
        const spacing = 400;
        const spaced = new SqlEventStore(t.db, { notifyEveryMs: spacing });
        const heard: number[] = [];
        const unlisten = await t.db.listen('nomos_events', () => heard.push(performance.now()));
        try {
          const event = { type: 'Spaced', data: {}, metadata: {} };
          const began = performance.now();
          // The first append after a quiet spell is told at once, not after the spacing.
          await spaced.append(newStream(), [event], { expectedVersion: 'no_stream' });
          await waitFor(() => heard.length === 1, 'the NOTIFY of the first append');
          expect(heard[0]! - began).toBeLessThan(spacing);
          // 30 appends one after another, then the last one's NOTIFY.
          for (let i = 0; i < 30; i++) await spaced.append(newStream(), [event], { expectedVersion: 'no_stream' });
          const lastAppended = performance.now();
          await waitFor(() => heard.some((at) => at > lastAppended), 'a NOTIFY after the last append');
          const elapsed = performance.now() - began;
          // One at the start, then at most one per spacing: fewer than one per append however slow the machine.
          expect(heard.length).toBeLessThanOrEqual(Math.ceil(elapsed / spacing) + 1);
          expect(heard.length).toBeLessThan(31);
          for (let i = 1; i < heard.length; i++) expect(heard[i]! - heard[i - 1]!).toBeGreaterThan(spacing / 2);
        } finally {
          await unlisten();
          await spaced.close();
        }
      },
    );

    it.skipIf(database.name === 'pglite')(
      'a live subscriber holds back a newer commit until an older transaction commits, then delivers both once (skipped on PGlite: one connection serialises transactions, commits cannot interleave)',
      async () => {
        const [early, late, sentinel, warmup] = [newStream(), newStream(), newStream(), newStream()];
        const streams = new Set([early, late, sentinel, warmup]);
        const received: StoredEvent[] = [];
        // The late transaction takes its global position first, then stays open until released.
        const holding = holdingCommits(t.db);
        const subscription = store.subscribe({ after: (await store.head()).checkpoint }).subscribe((e) => {
          if (streams.has(e.streamName)) received.push(e);
        });
        try {
          const warm = await store.append(warmup, [{ type: 'Warmup', data: {}, metadata: {} }], { expectedVersion: 'no_stream' });
          await waitFor(() => received.length === 1, 'the subscriber to go live');

          const lateAppend = new SqlEventStore(holding.db).append(late, [{ type: 'CommittedLate', data: {}, metadata: {} }], {
            expectedVersion: 'no_stream',
          });
          await holding.workDone;
          const earlyResult = await store.append(early, [{ type: 'CommittedEarly', data: {}, metadata: {} }], { expectedVersion: 'no_stream' });

          // A reader that follows global_position sees only the early event and moves its cursor past the late one.
          const naive = await t.db.query<{ global_position: number }>(
            'SELECT global_position FROM events WHERE global_position > $1 ORDER BY global_position',
            [warm.position],
          );
          expect(naive.rows.map((r) => Number(r.global_position))).toEqual([earlyResult.position]);

          // The store holds the early event back and says why, rather than deliver it out of order.
          const whileOpen = await store.readAll({ after: received[0]!.checkpoint, limit: 100 });
          expect(whileOpen).toEqual({ events: [], pending: true });
          await new Promise((resolve) => setTimeout(resolve, 300));
          expect(received.map((e) => e.type)).toEqual(['Warmup']);

          holding.release();
          const lateResult = await lateAppend;
          // The point of the test: the event that committed last has the lower position.
          expect(lateResult.position).toBeLessThan(earlyResult.position);
          const naiveAfterCommit = await t.db.query('SELECT 1 FROM events WHERE global_position > $1', [earlyResult.position]);
          expect(naiveAfterCommit.rows).toEqual([]);

          await waitFor(() => received.length === 3, 'both events');
          // A later event arriving proves nothing more about the first two is still on its way.
          await store.append(sentinel, [{ type: 'Sentinel', data: {}, metadata: {} }], { expectedVersion: 'no_stream' });
          await waitFor(() => received.length >= 4, 'the sentinel');
          expect(received.map((e) => e.type)).toEqual(['Warmup', 'CommittedLate', 'CommittedEarly', 'Sentinel']);
          expect(received.map((e) => e.position).slice(1, 3)).toEqual([lateResult.position, earlyResult.position]);
        } finally {
          // A failed assertion must not leave the transaction open and the database undroppable.
          holding.release();
          subscription.unsubscribe();
        }
      },
    );

    it.skipIf(database.name === 'pglite')(
      'reports pending when the held-back transaction commits right after the read, so no reader goes idle with events unread (skipped on PGlite: one connection serialises transactions)',
      async () => {
        const [early, late] = [newStream(), newStream()];
        const from = (await store.head()).checkpoint;
        const holding = holdingCommits(t.db);
        const lateAppend = new SqlEventStore(holding.db).append(late, [{ type: 'CommittedLate', data: {}, metadata: {} }], {
          expectedVersion: 'no_stream',
        });
        try {
          await holding.workDone;
          await store.append(early, [{ type: 'CommittedEarly', data: {}, metadata: {} }], { expectedVersion: 'no_stream' });
          // The older transaction commits right after the read that held it back: the statement that answers an
          // empty page (the first, which carries pending on its rows, has none to carry it on).
          let interleaved = false;
          const interleaving: Db = {
            ...t.db,
            query: async <Row,>(sql: string, params?: readonly unknown[]) => {
              const result = await t.db.query<Row>(sql, params);
              if (!interleaved && sql.includes('events_safe_bound()') && sql.includes('head.pending')) {
                interleaved = true;
                holding.release();
                await lateAppend;
              }
              return result;
            },
          };
          const first = await new SqlEventStore(interleaving).readAll({ after: from, limit: 100 });
          expect(interleaved).toBe(true);
          // Nothing was safe to read when it looked; both events are there now, so it must say to look again.
          expect(first).toEqual({ events: [], pending: true });
          const second = await store.readAll({ after: from, limit: 100 });
          expect(second.events.map((e) => e.type)).toEqual(['CommittedLate', 'CommittedEarly']);
          expect(second.pending).toBe(false);
        } finally {
          holding.release();
          await lateAppend;
        }
      },
    );
  });
}
