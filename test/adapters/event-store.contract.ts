// What every EventStore adapter must prove, run by each adapter's test file against a real back end.
// Tests share one store, so each writes to its own streams and reads the global log from where it started.
import { randomUUID } from 'node:crypto';
import type { Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Checkpoint,
  compareCheckpoints,
  ConcurrencyError,
  type EventStore,
  type NewEvent,
  type StoredEvent,
} from '../../src/ports/event-store.ts';
import { sessionStream } from '../../src/domain/session/stream.ts';

export interface OpenedEventStore {
  readonly store: EventStore;
  close(): Promise<void>;
}

// Stream names carry a real prefix: the EventStoreDB adapter reads only this system's streams from $all.
export const newStream = (): string => sessionStream(randomUUID());

const event = (type: string, data: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): NewEvent => ({
  type,
  data,
  metadata,
});

export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Pages through the global log from `after` until nothing is left to read, as a patient reader would. */
async function readAllFrom(store: EventStore, after: Checkpoint, limit: number): Promise<{ events: StoredEvent[]; pages: number[] }> {
  const events: StoredEvent[] = [];
  const pages: number[] = [];
  let checkpoint = after;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const page = await store.readAll({ after: checkpoint, limit });
    if (page.events.length === 0) {
      if (!page.pending) return { events, pages };
      // Another transaction (on PostgreSQL, in any database of the server) holds the readable end back.
      await new Promise((resolve) => setTimeout(resolve, 10));
      continue;
    }
    pages.push(page.events.length);
    events.push(...page.events);
    checkpoint = page.events.at(-1)!.checkpoint;
  }
  throw new Error('readAll never reached the end of the log');
}

function collect(source: Observable<StoredEvent>, streams: ReadonlySet<string>) {
  const received: StoredEvent[] = [];
  const errors: unknown[] = [];
  const subscription = source.subscribe({
    next: (e) => {
      if (streams.has(e.streamName)) received.push(e);
    },
    error: (error: unknown) => errors.push(error),
  });
  return { received, errors, subscription };
}

const ids = (events: readonly StoredEvent[]) => events.map((e) => e.eventId);

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

export function eventStoreContract(name: string, open: () => Promise<OpenedEventStore>): void {
  describe(`EventStore contract on ${name}`, () => {
    let opened: OpenedEventStore | undefined;
    const store = (): EventStore => {
      if (!opened) throw new Error('store not open');
      return opened.store;
    };

    beforeAll(async () => {
      opened = await open();
    });
    afterAll(async () => {
      await opened?.close();
    });

    it('appends to a new stream and reads back types, data, metadata and positions', async () => {
      const stream = newStream();
      const result = await store().append(
        stream,
        [event('GoalSet', { goal: 'patch nginx', n: 1 }, { actor: 'op' }), event('PlanProposed', { steps: ['a', 'b'] }), event('GoalAchieved', { nested: { ok: true } })],
        { expectedVersion: 'no_stream' },
      );
      expect(result.nextExpectedVersion).toBe(2);

      const { version, events } = await store().readStream(stream);
      expect(version).toBe(2);
      expect(events.map((e) => [e.streamName, e.streamPosition, e.type, e.data, e.metadata])).toEqual([
        [stream, 0, 'GoalSet', { goal: 'patch nginx', n: 1 }, { actor: 'op' }],
        [stream, 1, 'PlanProposed', { steps: ['a', 'b'] }, {}],
        [stream, 2, 'GoalAchieved', { nested: { ok: true } }, {}],
      ]);
      const positions = events.map((e) => e.position);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect(new Set(positions).size).toBe(3);
      expect(result.position).toBe(positions[2]);
      expect(new Set(ids(events)).size).toBe(3);
      for (const e of events) expect(Number.isNaN(Date.parse(e.recordedAt))).toBe(false);
    });

    it('appends when the expected version matches and throws ConcurrencyError when it does not', async () => {
      const stream = newStream();
      await store().append(stream, [event('A')], { expectedVersion: 'no_stream' });
      const second = await store().append(stream, [event('B')], { expectedVersion: 0 });
      expect(second.nextExpectedVersion).toBe(1);

      const error = await rejection(store().append(stream, [event('C')], { expectedVersion: 0 }));
      expect(error).toBeInstanceOf(ConcurrencyError);
      expect(error).toMatchObject({ code: 'concurrency_conflict', streamName: stream, expected: 0, actual: 1 });
      expect((await store().readStream(stream)).events.map((e) => e.type)).toEqual(['A', 'B']);
    });

    it('throws ConcurrencyError with version -1 when a number is expected of a missing stream', async () => {
      const stream = newStream();
      const error = await rejection(store().append(stream, [event('A')], { expectedVersion: 0 }));
      expect(error).toBeInstanceOf(ConcurrencyError);
      expect(error).toMatchObject({ code: 'concurrency_conflict', actual: -1 });
      expect(await store().readStream(stream)).toEqual({ version: -1, events: [] });
    });

    it("throws ConcurrencyError for 'no_stream' on a stream that exists", async () => {
      const stream = newStream();
      await store().append(stream, [event('A'), event('B')], { expectedVersion: 'no_stream' });
      const error = await rejection(store().append(stream, [event('C')], { expectedVersion: 'no_stream' }));
      expect(error).toBeInstanceOf(ConcurrencyError);
      expect(error).toMatchObject({ code: 'concurrency_conflict', expected: 'no_stream', actual: 1 });
      expect((await store().readStream(stream)).version).toBe(1);
    });

    it("appends with 'any' to a missing stream and to an existing one", async () => {
      const stream = newStream();
      expect((await store().append(stream, [event('A')], { expectedVersion: 'any' })).nextExpectedVersion).toBe(0);
      expect((await store().append(stream, [event('B'), event('C')], { expectedVersion: 'any' })).nextExpectedVersion).toBe(2);
      expect((await store().readStream(stream)).events.map((e) => e.type)).toEqual(['A', 'B', 'C']);
    });

    it('reads a missing stream as version -1 with no events', async () => {
      expect(await store().readStream(newStream())).toEqual({ version: -1, events: [] });
    });

    it('pages through readAll in order with after and limit, never repeating an event', async () => {
      const start = (await store().head()).checkpoint;
      const [a, b, c] = [newStream(), newStream(), newStream()];
      await store().append(a, [event('A0')], { expectedVersion: 'no_stream' });
      await store().append(b, [event('B0'), event('B1')], { expectedVersion: 'no_stream' });
      await store().append(a, [event('A1')], { expectedVersion: 0 });
      await store().append(c, [event('C0'), event('C1'), event('C2')], { expectedVersion: 'no_stream' });
      await store().append(b, [event('B2')], { expectedVersion: 1 });

      const { events, pages } = await readAllFrom(store(), start, 2);
      expect(pages.every((size) => size <= 2)).toBe(true);
      expect(new Set(ids(events)).size).toBe(events.length);
      for (let i = 1; i < events.length; i++) expect(compareCheckpoints(events[i]!.checkpoint, events[i - 1]!.checkpoint)).toBe(1);
      const ours = events.filter((e) => [a, b, c].includes(e.streamName));
      expect(ours.map((e) => e.type)).toEqual(['A0', 'B0', 'B1', 'A1', 'C0', 'C1', 'C2', 'B2']);

      // `after` is exclusive: reading after the fourth event starts at the fifth.
      const rest = await store().readAll({ after: ours[3]!.checkpoint, limit: 100 });
      expect(rest.events.filter((e) => [a, b, c].includes(e.streamName)).map((e) => e.type)).toEqual(['C0', 'C1', 'C2', 'B2']);
    });

    it("readAllProjected reads readAll's pages as projections see them: the same events, metadata cut to the projected keys", async () => {
      const start = (await store().head()).checkpoint;
      const [a, b] = [newStream(), newStream()];
      const full = { occurred_at: '2026-11-30T08:00:00.000Z', actor: { role: 'agent', id: 'nomos' }, client: { name: 'claude-code', version: '2.1.7' }, correlation_id: 'c-1', causation_id: 'c-0', schema_version: 1 };
      await store().append(a, [event('A0', { n: 1, nested: { deep: [1, 'two'] } }, full), event('A1', {}, { occurred_at: full.occurred_at })], { expectedVersion: 'no_stream' });
      await store().append(b, [event('B0', { text: 'é\u{1F600}' }, full)], { expectedVersion: 'no_stream' });
      let after = start;
      for (let reads = 0; ; reads++) {
        if (reads > 1_000) throw new Error('readAll and readAllProjected never agreed on a page');
        const [whole, part] = await Promise.all([store().readAll({ after, limit: 2 }), store().readAllProjected({ after, limit: 2 })]);
        // Both read the log as it stands; a page differs only while an append is in flight elsewhere, so read again.
        if (whole.events.length !== part.events.length || whole.pending !== part.pending) continue;
        expect(part.events).toEqual(
          whole.events.map((e) => ({
            streamName: e.streamName,
            position: e.position,
            checkpoint: e.checkpoint,
            type: e.type,
            data: e.data,
            metadata: { occurred_at: e.metadata.occurred_at ?? null, actor: e.metadata.actor ?? null, client: e.metadata.client ?? null },
          })),
        );
        if (whole.events.length === 0 && !whole.pending) break;
        if (whole.events.length > 0) after = whole.events.at(-1)!.checkpoint;
      }
      const ours = (await readAllFrom(store(), start, 100)).events.filter((e) => e.streamName === a || e.streamName === b);
      const projected = await store().readAllProjected({ after: start, limit: 100 });
      const mine = projected.events.filter((e) => e.streamName === a || e.streamName === b);
      expect(mine.map((e) => [e.type, e.data, e.metadata])).toEqual([
        ['A0', { n: 1, nested: { deep: [1, 'two'] } }, { occurred_at: full.occurred_at, actor: full.actor, client: full.client }],
        ['A1', {}, { occurred_at: full.occurred_at, actor: null, client: null }],
        ['B0', { text: 'é\u{1F600}' }, { occurred_at: full.occurred_at, actor: full.actor, client: full.client }],
      ]);
      expect(mine.map((e) => e.position)).toEqual(ours.map((e) => e.position));
    });

    it('keeps the order of a multi-event append in its stream and in the global log', async () => {
      const start = (await store().head()).checkpoint;
      const stream = newStream();
      const types = ['E0', 'E1', 'E2', 'E3', 'E4', 'E5'];
      await store().append(stream, types.map((t) => event(t, { t })), { expectedVersion: 'no_stream' });

      const read = await store().readStream(stream);
      expect(read.events.map((e) => [e.type, e.streamPosition, e.data])).toEqual(types.map((t, i) => [t, i, { t }]));
      const global = (await readAllFrom(store(), start, 100)).events.filter((e) => e.streamName === stream);
      expect(ids(global)).toEqual(ids(read.events));
    });

    it('loses nothing when 20 writers race on one stream, each retrying on ConcurrencyError', async () => {
      const stream = newStream();
      let conflicts = 0;
      const writer = async (n: number) => {
        for (let attempt = 0; attempt < 200; attempt++) {
          const { version } = await store().readStream(stream);
          try {
            await store().append(stream, [event('Counted', { writer: n })], { expectedVersion: version === -1 ? 'no_stream' : version });
            return;
          } catch (error) {
            if (!(error instanceof ConcurrencyError)) throw error;
            conflicts++;
          }
        }
        throw new Error(`writer ${n} never got its event in`);
      };
      await Promise.all(Array.from({ length: 20 }, (_, n) => writer(n)));

      const { version, events } = await store().readStream(stream);
      expect(version).toBe(19);
      expect(events.map((e) => e.streamPosition)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      expect(events.map((e) => e.data.writer).sort((x, y) => Number(x) - Number(y))).toEqual(Array.from({ length: 20 }, (_, i) => i));
      // Every writer read the stream before the first append landed, so the race was real.
      expect(conflicts).toBeGreaterThan(0);
    });

    it('lists every event exactly once in readAll when writers append to many streams at once', async () => {
      const start = (await store().head()).checkpoint;
      const streams = Array.from({ length: 10 }, newStream);
      await Promise.all(
        streams.map(async (stream) => {
          let expectedVersion: number | 'no_stream' = 'no_stream';
          for (let i = 0; i < 5; i++) {
            ({ nextExpectedVersion: expectedVersion } = await store().append(stream, [event('Step', { i })], { expectedVersion }));
          }
        }),
      );

      const { events } = await readAllFrom(store(), start, 7);
      const ours = events.filter((e) => streams.includes(e.streamName));
      expect(ours).toHaveLength(50);
      expect(new Set(ids(ours)).size).toBe(50);
      for (const stream of streams) {
        expect(ours.filter((e) => e.streamName === stream).map((e) => e.streamPosition)).toEqual([0, 1, 2, 3, 4]);
      }
      for (let i = 1; i < events.length; i++) expect(compareCheckpoints(events[i]!.checkpoint, events[i - 1]!.checkpoint)).toBe(1);
    });

    it('subscribe delivers catch-up events, then live ones, in readAll order without duplicates, until unsubscribed', async () => {
      const start = (await store().head()).checkpoint;
      const [a, b] = [newStream(), newStream()];
      const streams = new Set([a, b]);
      await store().append(a, [event('Old0'), event('Old1')], { expectedVersion: 'no_stream' });
      await store().append(b, [event('Old2')], { expectedVersion: 'no_stream' });

      const first = collect(store().subscribe({ after: start, batchSize: 2 }), streams);
      await waitFor(() => first.received.length >= 3, 'catch-up events');
      await store().append(b, [event('Live0')], { expectedVersion: 0 });
      await store().append(a, [event('Live1'), event('Live2')], { expectedVersion: 1 });
      await waitFor(() => first.received.length >= 6, 'live events');

      const log = (await readAllFrom(store(), start, 100)).events.filter((e) => streams.has(e.streamName));
      expect(first.received.map((e) => e.type)).toEqual(['Old0', 'Old1', 'Old2', 'Live0', 'Live1', 'Live2']);
      expect(ids(first.received)).toEqual(ids(log));
      expect(first.errors).toEqual([]);

      first.subscription.unsubscribe();
      // A second subscriber proves the next event is deliverable; the first, unsubscribed, must not get it.
      const second = collect(store().subscribe({ after: log.at(-1)!.checkpoint }), streams);
      await store().append(b, [event('AfterUnsubscribe')], { expectedVersion: 1 });
      await waitFor(() => second.received.length >= 1, 'the event after unsubscribe');
      await new Promise((resolve) => setTimeout(resolve, 100));
      second.subscription.unsubscribe();
      expect(second.received.map((e) => e.type)).toEqual(['AfterUnsubscribe']);
      expect(first.received).toHaveLength(6);
    });

    it('readStream reads a range: at most max events from a stream position, with the stream\'s current version', async () => {
      const stream = newStream();
      await store().append(stream, Array.from({ length: 7 }, (_, i) => event(`E${i}`)), { expectedVersion: 'no_stream' });
      const whole = await store().readStream(stream);
      const middle = await store().readStream(stream, { from: 2, max: 3 });
      expect(middle.version).toBe(6);
      expect(middle.events).toEqual(whole.events.slice(2, 5));
      expect((await store().readStream(stream, { from: 5, max: 10 })).events.map((e) => e.type)).toEqual(['E5', 'E6']);
      expect(await store().readStream(stream, { from: 7, max: 10 })).toEqual({ version: 6, events: [] });
      expect(await store().readStream(stream, { from: 0, max: 0 })).toEqual({ version: 6, events: [] });
      expect(await store().readStream(newStream(), { from: 0, max: 5 })).toEqual({ version: -1, events: [] });
    });

    it('streamChanges(name) fires after an append to that stream, not after appends to others', async () => {
      const mine = newStream();
      const other = newStream();
      let fired = 0;
      const subscription = store()
        .streamChanges(mine)
        .subscribe(() => fired++);
      try {
        let lastAppend = 0;
        await waitFor(async () => {
          if (fired > 0) return true;
          if (Date.now() - lastAppend > 250) {
            lastAppend = Date.now();
            await store().append(mine, [event('Ping')], { expectedVersion: 'any' });
          }
          return false;
        }, 'the first change');
        // Let any echo of those appends arrive before counting.
        await new Promise((resolve) => setTimeout(resolve, 200));
        const before = fired;
        for (let i = 0; i < 10; i++) await store().append(other, [event('Elsewhere')], { expectedVersion: 'any' });
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(fired).toBe(before);
        await store().append(mine, [event('Ping')], { expectedVersion: 'any' });
        await waitFor(() => fired > before, 'a change after an append to the stream');
      } finally {
        subscription.unsubscribe();
      }
    });

    it('changes() fires after an append', async () => {
      const stream = newStream();
      let fired = 0;
      const subscription = store()
        .changes()
        .subscribe(() => fired++);
      try {
        // The first signal may race the listener's setup (or be a readiness tick): append until one arrives.
        let lastAppend = 0;
        await waitFor(async () => {
          if (fired > 0) return true;
          if (Date.now() - lastAppend > 250) {
            lastAppend = Date.now();
            await store().append(stream, [event('Ping')], { expectedVersion: 'any' });
          }
          return false;
        }, 'the first change');
        const before = fired;
        await store().append(stream, [event('Ping')], { expectedVersion: 'any' });
        await waitFor(() => fired > before, 'a change after the append');
      } finally {
        subscription.unsubscribe();
      }
    });

    it('append returns its last event\'s checkpoint, checkpointOf finds the checkpoint of an event by position, null for none, and head moves forward', async () => {
      const before = await store().head();
      const stream = newStream();
      const result = await store().append(stream, [event('A'), event('B')], { expectedVersion: 'no_stream' });
      const [first, last] = (await store().readStream(stream)).events;

      expect(await store().checkpointOf(first!.position)).toEqual(first!.checkpoint);
      expect(await store().checkpointOf(result.position)).toEqual(last!.checkpoint);
      expect(result.checkpoint).toEqual(last!.checkpoint);
      expect(await store().checkpointOf(0)).toBeNull();

      const after = await store().head();
      expect(compareCheckpoints(after.checkpoint, before.checkpoint)).toBe(1);
      expect(after.checkpoint).toEqual(last!.checkpoint);
      expect(after.position).toBe(result.position);
    });
  });
}
