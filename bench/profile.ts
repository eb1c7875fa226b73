// `npm run bench:profile [-- --events N --projection NAME]`: where a rebuild and an append spend their time,
// statement by statement, measured at the client (pg_stat_statements needs a server restart to enable).
// Loads N generated events into a fresh database, rebuilds one projection through a Db that times every
// statement, then appends with 32 writers through the same kind of Db; prints both profiles.
import { parseArgs } from 'node:util';
import type { Db, Queryable, Transaction, TransactionOptions } from '../src/ports/db.ts';
import { SqlEventStore } from '../src/adapters/eventstore/sql.ts';
import { rebuildProjection } from '../src/projections/projector.ts';
import { projections } from '../src/runtime.ts';
import { appendSessions } from './append.ts';
import { createBenchDatabase } from './database.ts';
import { sessions } from './generator.ts';
import { Rng } from './prng.ts';
import { n } from './table.ts';

interface Stat {
  calls: number;
  ms: number;
}

/** A Db that times each statement by its text (whitespace collapsed); a transaction's own cost goes under BEGIN…COMMIT. */
function timedDb(db: Db, stats: Map<string, Stat>): Db {
  const record = (key: string, elapsed: number) => {
    const stat = stats.get(key) ?? { calls: 0, ms: 0 };
    stat.calls += 1;
    stat.ms += elapsed;
    stats.set(key, stat);
  };
  const timed = (q: Queryable): Queryable['query'] =>
    async <Row>(sql: string, params?: readonly unknown[]) => {
      const started = performance.now();
      try {
        return await q.query<Row>(sql, params);
      } finally {
        record(sql.replace(/\s+/g, ' ').slice(0, 110), performance.now() - started);
      }
    };
  return {
    ...db,
    query: timed(db),
    transaction: async <T>(fn: (tx: Transaction, opened: Promise<Record<string, unknown>[]>) => Promise<T>, options?: TransactionOptions) => {
      const started = performance.now();
      let inside = 0;
      try {
        return await db.transaction(
          (tx, opened) =>
            fn(
              {
                exec: (sql) => tx.exec(sql),
                send: (sql, params, options) => tx.send(sql, params, options),
                query: async <Row>(sql: string, params?: readonly unknown[]) => {
                  const t = performance.now();
                  try {
                    return await timed(tx)<Row>(sql, params);
                  } finally {
                    inside += performance.now() - t;
                  }
                },
              },
              opened,
            ),
          options,
        );
      } finally {
        record('(BEGIN … COMMIT, the transaction beyond its statements)', performance.now() - started - inside);
      }
    },
  };
}

function print(title: string, stats: Map<string, Stat>, events: number): void {
  const total = [...stats.values()].reduce((sum, st) => sum + st.ms, 0);
  console.log(`\n### ${title}: ${n(events)} events, ${(total / 1000).toFixed(1)} s in statements\n`);
  console.log('| statement | calls | per event | total ms | mean ms | share |\n|---|---|---|---|---|---|');
  for (const [sql, st] of [...stats].sort((a, b) => b[1].ms - a[1].ms).slice(0, 14)) {
    console.log(`| \`${sql}\` | ${n(st.calls)} | ${(st.calls / events).toFixed(2)} | ${n(st.ms)} | ${(st.ms / st.calls).toFixed(3)} | ${((100 * st.ms) / total).toFixed(1)}% |`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { events: { type: 'string', default: '20000' }, projection: { type: 'string', default: 'sessions' } } });
  const projection = projections.find((p) => p.name === values.projection);
  if (!projection) throw new Error(`no projection ${values.projection}`);
  const bench = await createBenchDatabase(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres', 40);
  try {
    const source = sessions(new Rng(7), { from: Date.now() - 30 * 86_400_000, to: Date.now(), count: 10_000 });
    const loaded = await appendSessions(new SqlEventStore(bench.db), source, { writers: 8, untilEvents: Number(values.events), perCommand: false });

    const rebuildStats = new Map<string, Stat>();
    const db = timedDb(bench.db, rebuildStats);
    await rebuildProjection({ store: new SqlEventStore(db), db }, projection);
    print(`rebuild of the ${projection.name} projection`, rebuildStats, loaded.events);

    const appendStats = new Map<string, Stat>();
    const appended = await appendSessions(new SqlEventStore(timedDb(bench.db, appendStats)), source, { writers: 32, untilEvents: 5_000, perCommand: true });
    print(`append, 32 writers, one append per command (${n(appended.events / appended.seconds)} events/s)`, appendStats, appended.events);
  } finally {
    await bench.drop();
  }
}

await main();
