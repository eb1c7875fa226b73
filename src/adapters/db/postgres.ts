// Db over a node-postgres pool. LISTEN holds one dedicated client per channel.
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Db, QueryOptions, Transaction, TransactionOptions } from '../../ports/db.ts';
import { Sent } from './sent.ts';

// BIGINT and NUMERIC come back as strings by default; positions fit in a JS number for any real history.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

const preparedNames = new Map<string, string>();

/** The query config node-postgres takes: named when the options ask for a prepared statement. */
function statement(sql: string, params: readonly unknown[] | undefined, options: QueryOptions | undefined): pg.QueryConfig {
  const values = params as unknown[] | undefined;
  let name = options?.name;
  if (name === undefined && options?.prepare === true) {
    name = preparedNames.get(sql);
    if (name === undefined) {
      name = `nomos_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
      preparedNames.set(sql, name);
    }
  }
  return { text: sql, ...(values && { values }), ...(name !== undefined && { name }) };
}

/**
 * Holds a client's writes until the promise jobs of the moment are done, so that what a transaction sends in
 * one go (its opening and first reads, its writes and COMMIT) leaves in one write to the socket, not one a
 * statement: on a small VM each socket write costs the wake-up of the process on the other end. node-postgres
 * corks around each statement it sends; this cork holds those.
 */
function writeBatcher(client: pg.PoolClient): () => void {
  const stream = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection?.stream;
  let held = false;
  return () => {
    if (held || typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return;
    held = true;
    stream.cork();
    process.nextTick(() => {
      held = false;
      stream.uncork!();
    });
  };
}

export function postgresDb(connectionString: string, options: { max?: number } = {}): Db {
  // Pipelined: a statement goes out without waiting for the answers to those before it on the connection, so
  // what a transaction sends without waiting (its opening, Transaction.send) shares round trips.
  const pool = new pg.Pool({ connectionString, max: options.max ?? 10, pipeline: true });
  // An idle client that loses its connection must not crash the process.
  pool.on('error', () => undefined);
  return {
    kind: 'postgres',
    query: async <Row>(sql: string, params?: readonly unknown[], options?: QueryOptions) => {
      const r = await pool.query(statement(sql, params, options));
      return { rows: r.rows as Row[] };
    },
    exec: async (sql: string) => {
      await pool.query(sql);
    },
    async transaction<T>(fn: (tx: Transaction, opened: Promise<Record<string, unknown>[]>) => Promise<T>, options?: TransactionOptions): Promise<T> {
      const client = await pool.connect();
      // The pool listens for a connection's errors only while it is idle: one lost while checked out, between two
      // statements (a database dropped, a server shutting down), would be an unhandled 'error' that ends the
      // process. Its statements fail on their own; the lost connection is destroyed, not put back.
      let lost: Error | undefined = undefined;
      const onError = (error: Error) => (lost ??= error);
      client.on('error', onError);
      // What went out without being waited for: each is answered before COMMIT is, and any failure is the outcome.
      const sent = new Sent();
      const hold = writeBatcher(client);
      const run = <R extends pg.QueryResultRow>(config: string | pg.QueryConfig): Promise<pg.QueryResult<R>> => {
        hold();
        return client.query<R>(config);
      };
      try {
        // BEGIN in a message of its own: a statement sent behind it runs inside the transaction even when the
        // opening cannot be parsed.
        void sent.track(run('BEGIN'));
        const answers = (options?.opening ?? []).map(({ sql, params, options }) => sent.track(run(statement(sql, params, options))));
        const opened = sent.track(answers.length === 0 ? Promise.resolve([]) : answers[answers.length - 1]!.then((answer) => answer.rows as Record<string, unknown>[]));
        const tx: Transaction = {
          query: async <Row>(sql: string, params?: readonly unknown[], options?: QueryOptions) => {
            const r = await run(statement(sql, params, options));
            return { rows: r.rows as Row[] };
          },
          exec: async (sql: string) => {
            await run(sql);
          },
          send: (sql, params, options) => void sent.track(run(statement(sql, params, options))),
        };
        const result = await fn(tx, opened);
        // A statement sent that failed aborted the transaction, and PostgreSQL answers COMMIT with a rollback,
        // not an error: the answers to what was sent decide.
        void sent.track(run('COMMIT'));
        const failure = await sent.firstFailure();
        if (failure !== null) throw failure;
        return result;
      } catch (error) {
        // Behind everything sent on this connection, so it is answered last.
        await run('ROLLBACK').catch(() => undefined);
        throw await sent.cause(error);
      } finally {
        client.removeListener('error', onError);
        client.release(lost);
      }
    },
    async listen(channel, onNotify) {
      const client = new pg.Client({ connectionString });
      client.on('error', () => undefined);
      await client.connect();
      client.on('notification', (msg) => {
        if (msg.channel === channel) onNotify(msg.payload ?? '');
      });
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      return async () => {
        await client.end().catch(() => undefined);
      };
    },
    async tryLease(name) {
      const client = new pg.Client({ connectionString });
      let markLost: () => void = () => undefined;
      const lost = new Promise<void>((resolve) => (markLost = resolve));
      client.on('error', () => markLost());
      client.on('end', () => markLost());
      await client.connect();
      const { rows } = await client.query<{ held: boolean }>("SELECT pg_try_advisory_lock(hashtext('nomos-lease:' || $1)) AS held", [name]);
      if (!rows[0]?.held) {
        await client.end().catch(() => undefined);
        return null;
      }
      return {
        lost,
        release: async () => {
          await client.end().catch(() => undefined);
          markLost();
        },
      };
    },
    close: () => pool.end(),
  };
}
