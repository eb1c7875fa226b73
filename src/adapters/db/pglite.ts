// Db over PGlite, PostgreSQL compiled to WebAssembly and run in-process: the embedded default, with its
// data in a directory (or in memory when none is given). One connection, so statements are serialised.
import { setFlagsFromString } from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import type { Db, Queryable } from '../../ports/db.ts';

// PostgreSQL zeroes its shared buffers at start, which in WebAssembly takes a third of a second for the default
// 128 MB; an embedded database of one operator's fleet fits in far less, and the OS caches its files anyway.
const SHARED_BUFFERS = '32MB';

export async function pgliteDb(dataDir?: string): Promise<Db> {
  // WebAssembly compiled by Liftoff, V8's baseline compiler, only: optimising PostgreSQL's code in the background
  // took both cores of a small machine for seconds after start and stalled this thread's event loop for a quarter
  // of a second while it finished, for queries a few percent faster after that. It is V8's flag, process-wide,
  // and read when a module is compiled; PGlite is the only WebAssembly nomos runs.
  setFlagsFromString('--liftoff-only');
  const options = { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`] };
  const pg = dataDir === undefined ? new PGlite(options) : new PGlite(dataDir, options);
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
