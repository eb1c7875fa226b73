// The chain check alone, to profile it: N events inserted in bulk (one INSERT) or, with --generated, the bench's
// own generated sessions (the events `npm run bench` seals and checks), sealed, then verifyChain timed.
// `npm run bench:verify -- --events 100000 [--generated] [--threads 0,1,2]`: the check once per thread count given
// (by default verifyChain's own choice); with `node --cpu-prof --import tsx bench/verify-profile.ts` for a profile.
import { createPublicKey } from 'node:crypto';
import { parseArgs } from 'node:util';
import { generateSigningKey } from '../src/log/keys.ts';
import { Sealer } from '../src/log/sealer.ts';
import { sealState } from '../src/log/store.ts';
import { verifyChain } from '../src/log/verify-chain.ts';
import { SqlEventStore } from '../src/adapters/eventstore/sql.ts';
import { appendSessions } from './append.ts';
import { createBenchDatabase } from './database.ts';
import { sessions } from './generator.ts';
import { Rng } from './prng.ts';

const { values } = parseArgs({ options: { events: { type: 'string', default: '100000' }, threads: { type: 'string' }, generated: { type: 'boolean', default: false } } });
const count = Number(values.events);
const bench = await createBenchDatabase(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres', 4);
try {
  if (values.generated) await loadGenerated(count);
  else await bench.db.query(
    `INSERT INTO events (event_id, stream_name, stream_position, type, data, metadata)
     SELECT gen_random_uuid(), 'session-' || (i / 20), i % 20, 'ToolCallCompleted',
            jsonb_build_object('tool_call_id', 't' || i, 'result', jsonb_build_object('stdout', repeat('x', 200), 'exit_code', 0)),
            jsonb_build_object('actor', jsonb_build_object('role', 'agent', 'id', 'bot'), 'occurred_at', now()::text)
       FROM generate_series(1, $1) AS i`,
    [count],
  );
  const { rows } = await bench.db.query<{ n: string; bytes: string }>('SELECT count(*) AS n, avg(pg_column_size(data))::int AS bytes FROM events');
  console.log(`${rows[0]!.n} events, ${rows[0]!.bytes} bytes of data each on average`);
  const stop = new AbortController();
  let t = performance.now();
  const sealing = new Sealer(bench.db, { key: generateSigningKey(), origin: null, sealMs: 5, checkpointEvery: { events: 10_000, ms: null }, batch: 5_000 }).run(stop.signal);
  while ((await sealState(bench.db))?.size !== Number(rows[0]!.n)) await new Promise((r) => setTimeout(r, 20));
  console.log(`sealed ${rows[0]!.n} in ${((performance.now() - t) / 1000).toFixed(2)} s`);
  stop.abort();
  await sealing;
  await bench.db.exec('VACUUM ANALYZE'); // as the bench settles its log before the check (bench/log.ts)
  await bench.db.exec('CHECKPOINT');
  for (const threads of values.threads === undefined ? [undefined] : values.threads.split(',').map(Number)) {
    const cpu = process.cpuUsage();
    t = performance.now();
    const report = await verifyChain(bench.db, null, (pem) => createPublicKey(pem), threads === undefined ? {} : { threads });
    const secs = (performance.now() - t) / 1000;
    const used = process.cpuUsage(cpu);
    console.log(
      `verified ${report.events} in ${secs.toFixed(2)} s (threads ${threads ?? 'default'}): ${Math.round(report.events / secs)} events/s, ${report.findings.length} findings; this process's CPU ${((used.user + used.system) / 1e6).toFixed(2)} s`,
    );
  }
} finally {
  await bench.drop();
}

/** The bench's sessions (its seed's generator), appended a session per append until `events` are in. */
async function loadGenerated(events: number): Promise<void> {
  const now = Date.now();
  const source = sessions(new Rng(20_260_718), { from: now - 30 * 86_400_000, to: now, count: Math.ceil(events / 10) });
  const store = new SqlEventStore(bench.db);
  for (let left = events; left > 0; ) {
    const run = await appendSessions(store, source, { writers: 4, untilEvents: Math.min(left, 200_000), perCommand: false });
    if (run.events === 0) break;
    left -= run.events;
  }
}
