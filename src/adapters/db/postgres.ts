// Db over a node-postgres pool. LISTEN holds one dedicated client per channel.
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Db, QueryOptions, Transaction, TransactionOptions } from '../../ports/db.ts';

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

export function postgresDb(connectionString: string, options: { max?: number } = {}): Db {
  const pool = new pg.Pool({ connectionString, max: options.max ?? 10 });
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
    async transaction<T>(fn: (tx: Transaction, opened: Record<string, unknown>[]) => Promise<T>, options?: TransactionOptions): Promise<T> {
      const client = await pool.connect();
      try {
        const opening = options?.opening ?? [];
        // One round trip for BEGIN and the opening; a multi-statement text answers with a result per statement.
        const began = await client.query(['BEGIN', ...opening].join(';\n'));
        const results = Array.isArray(began) ? (began as pg.QueryResult[]) : [began];
        const opened = opening.length > 0 ? (results[results.length - 1]!.rows as Record<string, unknown>[]) : [];
        let closing: readonly string[] = [];
        const tx: Transaction = {
          query: async <Row>(sql: string, params?: readonly unknown[], options?: QueryOptions) => {
            const r = await client.query(statement(sql, params, options));
            return { rows: r.rows as Row[] };
          },
          exec: async (sql: string) => {
            await client.query(sql);
          },
          closeWith: (statements) => void (closing = statements),
        };
        const result = await fn(tx, opened);
        await client.query([...closing, 'COMMIT'].join(';\n'));
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
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
