// Db over PGlite, PostgreSQL compiled to WebAssembly and run in-process: the embedded default, with its
// data in a directory (or in memory when none is given). One connection, so statements are serialised.
import { PGlite } from '@electric-sql/pglite';
import type { Db, Queryable } from '../../ports/db.ts';

export async function pgliteDb(dataDir?: string): Promise<Db> {
  const pg = dataDir === undefined ? new PGlite() : new PGlite(dataDir);
  await pg.waitReady;
  const parse = { [20]: (v: string) => Number(v) }; // INT8 as number, as in the postgres adapter
  return {
    kind: 'pglite',
    query: async <Row>(sql: string, params?: readonly unknown[]) => {
      const r = await pg.query<Row>(sql, params as unknown[] | undefined, { parsers: parse });
      return { rows: r.rows };
    },
    exec: async (sql: string) => {
      await pg.exec(sql);
    },
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) =>
      pg.transaction(async (t) =>
        fn({
          query: async <Row>(sql: string, params?: readonly unknown[]) => {
            const r = await t.query<Row>(sql, params as unknown[] | undefined, { parsers: parse });
            return { rows: r.rows };
          },
          exec: async (sql: string) => {
            await t.exec(sql);
          },
        }),
      ),
    async listen(channel, onNotify) {
      const unlisten = await pg.listen(channel, (payload) => onNotify(payload));
      return unlisten;
    },
    // One process owns a PGlite directory (the pid file sees to it), so it leads everything; the lease
    // still ends with release, so the same code path runs.
    tryLease() {
      let markLost: () => void = () => undefined;
      const lost = new Promise<void>((resolve) => (markLost = resolve));
      return Promise.resolve({ lost, release: () => Promise.resolve(markLost()) });
    },
    close: () => pg.close(),
  };
}
