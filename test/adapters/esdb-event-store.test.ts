// EsdbEventStore against a real EventStoreDB server, through the same contract as the SQL store. Without
// EVENTSTORE_URL the suite shows up as skipped, with the reason, rather than passing with nothing run.
import { describe, it } from 'vitest';
import { EsdbEventStore } from '../../src/adapters/eventstore/esdb.ts';
import { eventStoreContract } from './event-store.contract.ts';

const url = process.env.EVENTSTORE_URL;

if (url) {
  eventStoreContract('EventStoreDB', () => {
    const store = new EsdbEventStore(url);
    return Promise.resolve({ store, close: () => store.close() });
  });
} else {
  describe.skip('EventStoreDB contract — skipped: EVENTSTORE_URL is not set and no EventStoreDB server can run on this machine', () => {
    it('runs the EventStore contract against EsdbEventStore', () => undefined);
  });
}
