// The turn bus's deltas and what the agent records after them, seen from another server: a delta's NOTIFY must
// commit before anything the publisher commits once delivered() has resolved, or a client of another server can
// get the turn's `done` before its last deltas, and its stream ends without them.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnBus } from '../../src/agent/turn-bus.ts';
import { postgresDatabase, type TestDb } from '../support/databases.ts';
import { until } from '../support/until.ts';

describe('the turn bus on one server', () => {
  it('delivers at once when it is not shared, and to the session’s followers only', async () => {
    const bus = new TurnBus();
    const seen: string[] = [];
    const subscription = bus.tokens('s1').subscribe((text) => seen.push(text));
    bus.publish('s1', 'a');
    bus.publish('s2', 'b');
    await bus.delivered();
    expect(seen).toEqual(['a']);
    subscription.unsubscribe();
    expect(bus.hasListeners('s1')).toBe(false);
  });
});

describe.runIf(postgresDatabase !== null)('the turn bus shared on PostgreSQL (needs DATABASE_URL: the embedded database serves one process)', () => {
  let testDb: TestDb;
  let listener: pg.Client;
  const order: string[] = [];
  beforeAll(async () => {
    testDb = await postgresDatabase!.open({ migrated: false });
    // One session listening on both channels: PostgreSQL hands it notifications in the order their transactions committed.
    listener = new pg.Client({ connectionString: testDb.url! });
    await listener.connect();
    listener.on('notification', (message) => {
      order.push(message.channel === 'nomos_tokens' ? (JSON.parse(message.payload!) as { t: string }).t : `|${message.payload}|`);
    });
    await listener.query('LISTEN nomos_tokens');
    await listener.query('LISTEN test_marker');
  });
  afterAll(async () => {
    await listener?.end();
    await testDb?.close();
  });

  it('once delivered() resolves, every delta published before it has committed ahead of what is committed next', async () => {
    const bus = new TurnBus();
    const stop = await bus.share(testDb.db, 'server-a');
    try {
      let expected = '';
      for (let round = 0; round < 20; round++) {
        for (let i = 0; i < 5; i++) {
          bus.publish('s1', `${round}.${i} `);
          expected += `${round}.${i} `;
        }
        await bus.delivered();
        // What the agent records next (its text, the turn's end), standing in as a NOTIFY of its own.
        await testDb.db.query("SELECT pg_notify('test_marker', $1)", [String(round)]);
        expected += `|${round}|`;
      }
      await until('the last marker to arrive', () => Promise.resolve(order.includes('|19|') ? true : undefined));
      // Deltas that queued up while one was sent go together: the texts, joined, must read in order, markers between.
      expect(order.join('')).toBe(expected);
    } finally {
      await stop();
    }
  });

  it('waits only for the deltas published before it: another turn that keeps streaming does not hold it up', async () => {
    const bus = new TurnBus();
    const stop = await bus.share(testDb.db, 'server-b');
    let streaming = true;
    let others = 0;
    // Another session's model, publishing a delta every turn of the event loop: the queue never runs dry meanwhile.
    const other = (async () => {
      while (streaming) {
        bus.publish('s2', '.');
        others++;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      bus.publish('s1', 'mine');
      const outcome = await Promise.race([
        bus.delivered().then(() => 'delivered'),
        new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5_000)),
      ]);
      expect(outcome).toBe('delivered');
      expect(streaming).toBe(true);
      await until('the delta to reach a listener', () => Promise.resolve(order.includes('mine') ? true : undefined));
    } finally {
      streaming = false;
      await other;
      await bus.delivered();
      await stop();
    }
    expect(others).toBeGreaterThan(10);
  });
});
