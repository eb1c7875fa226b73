// Reading ahead: the reads a projection will make for a batch, sent with the first statements of the transaction
// that applies it, so that they share its first round trip instead of taking one of their own after it. The
// batch is a guess (the events this process just appended: EventStore.logIn's appendedAfter); the projection is
// then given the batch actually read, and a read it makes that was sent ahead, the same statement with the same
// parameters, is answered by what was sent. A wrong guess costs the reads sent for nothing, never a wrong row.
import type { QueryOptions, Statement, Transaction } from '../ports/db.ts';
import type { ProjectedEvent } from '../ports/event-store.ts';
import type { Projection } from './projection.ts';

/**
 * The reads the projection makes first for these events: it is run on a transaction that answers nothing,
 * recording each statement marked readOnly until the first that is not (a write, or a read that may see one),
 * or until it waits for an answer. A projection that fails on the guess reads nothing ahead. `seenAs` gives the
 * recorder as the batch's transaction will be seen (with its row cache: rows it holds are not read).
 */
export function readsFor(projection: Projection, events: readonly ProjectedEvent[], seenAs: (tx: Transaction) => Transaction = (tx) => tx): Statement[] {
  const handled = events.filter((event) => projection.handles.has(event.type));
  if (handled.length === 0) return [];
  const reads: Statement[] = [];
  let recording = true;
  // Never answered, and local: the run waiting on it is garbage once this returns.
  const unanswered = new Promise<never>(() => undefined);
  const stop = () => {
    recording = false;
    return unanswered;
  };
  const recorder: Transaction = {
    query: (sql: string, params?: readonly unknown[], options?: QueryOptions) => {
      if (!recording || options?.readOnly !== true) return stop();
      reads.push({ sql, ...(params !== undefined && { params }), ...(options !== undefined && { options }) });
      return unanswered;
    },
    exec: () => stop(),
    send: () => void stop(),
  };
  try {
    projection.applyBatch(seenAs(recorder), handled).catch(() => undefined);
  } catch {
    return [];
  }
  return reads;
}

const keyOf = (sql: string, params: readonly unknown[] | undefined): string => `${sql}\u0000${JSON.stringify(params ?? [])}`;

/**
 * Sends the reads on the transaction now and gives back the transaction as the projection is to see it: until
 * the projection writes, a query that was sent ahead is answered by that answer (once); any other, and every
 * query once it has written (a read sent ahead did not see the write), goes to the database as usual.
 */
export function sendAhead(tx: Transaction, reads: readonly Statement[]): Transaction {
  if (reads.length === 0) return tx;
  const answers = new Map<string, Promise<{ rows: unknown[] }>[]>();
  for (const { sql, params, options } of reads) {
    const answer = tx.query(sql, params, options);
    // Unused when the guess was wrong: its failure (which aborts the transaction) is seen by what follows it.
    answer.catch(() => undefined);
    const key = keyOf(sql, params);
    answers.set(key, [...(answers.get(key) ?? []), answer]);
  }
  let wrote = false;
  return {
    query: <Row>(sql: string, params?: readonly unknown[], options?: QueryOptions) => {
      if (options?.readOnly !== true) wrote = true;
      if (wrote) return tx.query<Row>(sql, params, options);
      const key = keyOf(sql, params);
      const waiting = answers.get(key);
      const answer = waiting?.shift();
      if (waiting?.length === 0) answers.delete(key);
      return (answer as Promise<{ rows: Row[] }> | undefined) ?? tx.query<Row>(sql, params, options);
    },
    exec: (sql: string) => {
      wrote = true;
      return tx.exec(sql);
    },
    send: (sql: string, params?: readonly unknown[], options?: QueryOptions) => {
      wrote = true;
      tx.send(sql, params, options);
    },
  };
}
