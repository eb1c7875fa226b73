// The whole event log as a test reads it to compare read models with: readAll pages until the log is exhausted
// and nothing is pending. An event whose transaction id is above one still in progress at the read (in any
// database of the cluster, e.g. another test file's) is held back and reported as pending; one read that ignored
// `pending` saw a shorter log than the projectors did, now and then, in CI.
import { START, type EventStore, type StoredEvent } from '../../src/ports/event-store.ts';

export async function wholeLog(store: EventStore, options: { pageSize?: number; timeoutMs?: number } = {}): Promise<StoredEvent[]> {
  const pageSize = options.pageSize ?? 1_000;
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const log: StoredEvent[] = [];
  let after = START;
  for (;;) {
    const { events, pending } = await store.readAll({ after, limit: pageSize });
    log.push(...events);
    const last = events[events.length - 1];
    if (last) after = last.checkpoint;
    if (events.length === pageSize) continue;
    if (!pending) return log;
    if (Date.now() > deadline) throw new Error(`the log still had events pending after ${options.timeoutMs ?? 10_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
