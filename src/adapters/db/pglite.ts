// Db over PGlite, PostgreSQL compiled to WebAssembly: the embedded default, with its data in a directory (or in
// memory when none is given). PGlite runs on a worker thread of its own (pglite-thread.mjs): its start overlaps
// the server's loading, and its queries run beside the event loop that answers HTTP rather than on it. One
// connection, so statements are serialised; a transaction holds it until it ends, as PGlite's own does.
import { Worker } from 'node:worker_threads';
import type { Db, Queryable, Transaction, TransactionOptions } from '../../ports/db.ts';
import { shipped } from '../../paths.ts';
import { Sent } from './sent.ts';

// PostgreSQL zeroes its shared buffers at start, which in WebAssembly takes a third of a second for the default
// 128 MB; an embedded database of one operator's fleet fits in far less, and the OS caches its files anyway.
const SHARED_BUFFERS = '32MB';
const THREAD = shipped('src', 'adapters', 'db', 'pglite-thread.mjs');

type Request =
  | { op: 'query'; sql: string; params: readonly unknown[] | undefined; tx?: number }
  | { op: 'exec'; sql: string; tx?: number }
  | { op: 'begin' }
  | { op: 'end'; tx: number; commit: boolean }
  | { op: 'listen' | 'unlisten'; channel: string }
  | { op: 'close' };

interface Answer {
  readonly id: number;
  readonly rows?: unknown[];
  readonly tx?: number;
  readonly error?: Record<string, unknown> & { message: string };
}

type Message = Answer | { readonly notify: string; readonly payload: string } | { readonly ready: boolean; readonly error?: Answer['error'] };

/** An error from the thread as the caller would have had it in-thread: a DatabaseError's fields included. */
function revive(error: NonNullable<Answer['error']>): Error {
  const { message, stack, ...fields } = error;
  const revived = Object.assign(new Error(message), fields);
  if (typeof stack === 'string') revived.stack = stack;
  return revived;
}

export async function pgliteDb(dataDir?: string): Promise<Db> {
  const worker = new Worker(THREAD, { workerData: { dataDir, startParams: ['-c', `shared_buffers=${SHARED_BUFFERS}`] } });
  const pending = new Map<number, { resolve: (answer: Answer) => void; reject: (error: Error) => void }>();
  const listeners = new Map<string, Set<(payload: string) => void>>();
  let nextId = 1;
  let gone: Error | null = null;

  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (message: Message) => {
      if ('ready' in message) {
        if (message.ready) resolve();
        else reject(revive(message.error ?? { message: 'PGlite did not start' }));
      } else if ('notify' in message) {
        for (const listener of listeners.get(message.notify) ?? []) listener(message.payload);
      } else {
        const waiter = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) waiter?.reject(revive(message.error));
        else waiter?.resolve(message);
      }
    });
    // A thread that fails or ends fails what waits on it, and everything asked after.
    const lost = (error: Error) => {
      gone ??= error;
      reject(error);
      for (const waiter of pending.values()) waiter.reject(error);
      pending.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the embedded database's thread exited (code ${code})`)));
  });
  try {
    await ready;
  } catch (error) {
    await worker.terminate();
    throw error;
  }

  const ask = (request: Request): Promise<Answer> => {
    if (gone) return Promise.reject(gone);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...request });
    });
  };
  const on = (tx?: number): Queryable => ({
    query: async <Row>(sql: string, params?: readonly unknown[]) => ({ rows: (await ask({ op: 'query', sql, params, ...(tx !== undefined && { tx }) })).rows as Row[] }),
    exec: async (sql: string) => void (await ask({ op: 'exec', sql, ...(tx !== undefined && { tx }) })),
  });

  return {
    kind: 'pglite',
    ...on(),
    async transaction<T>(fn: (tx: Transaction, opened: Promise<Record<string, unknown>[]>) => Promise<T>, options?: TransactionOptions): Promise<T> {
      const { tx } = await ask({ op: 'begin' });
      if (tx === undefined) throw new Error('the embedded database opened no transaction');
      const queryable = on(tx);
      // The thread runs a transaction's statements one at a time in the order they were asked for, so what is
      // sent without waiting runs in order too, and spares the waits between them.
      const sent = new Sent();
      let result: T;
      try {
        const answers = (options?.opening ?? []).map(({ sql, params }) => sent.track(queryable.query(sql, params)));
        const opened = sent.track(answers.length === 0 ? Promise.resolve([]) : answers[answers.length - 1]!.then((answer) => answer.rows));
        result = await fn(
          {
            ...queryable,
            send: (sql, params) => void sent.track(queryable.query(sql, params)),
          },
          opened,
        );
        // A statement that failed aborted the transaction, and COMMIT would only roll it back: say why instead.
        const failure = await sent.firstFailure();
        if (failure !== null) throw failure;
      } catch (error) {
        // The caller's error is the one to see; a rollback that fails too (the thread gone) adds nothing to it.
        await ask({ op: 'end', tx, commit: false }).catch(() => undefined);
        throw await sent.cause(error);
      }
      await ask({ op: 'end', tx, commit: true });
      return result;
    },
    async listen(channel, onNotify) {
      const set = listeners.get(channel) ?? new Set();
      listeners.set(channel, set);
      set.add(onNotify);
      await ask({ op: 'listen', channel });
      return async () => {
        set.delete(onNotify);
        if (set.size > 0 || listeners.get(channel) !== set) return;
        listeners.delete(channel);
        if (!gone) await ask({ op: 'unlisten', channel });
      };
    },
    // One process owns a PGlite directory (the pid file sees to it), so it leads everything; the lease
    // still ends with release, so the same code path runs.
    tryLease() {
      let markLost: () => void = () => undefined;
      const lost = new Promise<void>((resolve) => (markLost = resolve));
      return Promise.resolve({ lost, release: () => Promise.resolve(markLost()) });
    },
    async close() {
      if (gone) return;
      try {
        await ask({ op: 'close' });
      } finally {
        gone = new Error('the embedded database is closed');
        await worker.terminate();
      }
    },
  };
}
