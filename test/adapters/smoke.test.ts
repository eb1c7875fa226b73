import { describe, expect, it } from 'vitest';
import { SqlEventStore } from '../../src/adapters/eventstore/sql.ts';
import { START } from '../../src/commands/event-store.ts';
import { databases } from '../support/databases.ts';

describe.each(databases)('smoke on $name', (database) => {
  it('appends and reads', async () => {
    const t = await database.open();
    const store = new SqlEventStore(t.db);
    const r = await store.append('session-a', [{ type: 'X', data: { a: 1 }, metadata: {} }, { type: 'Y', data: {}, metadata: {} }], { expectedVersion: 'no_stream' });
    expect(r.nextExpectedVersion).toBe(1);
    const all = await store.readAll({ after: START, limit: 10 });
    expect(all.events.map((e) => e.type)).toEqual(['X', 'Y']);
    await store.close();
    await t.close();
  });
});
