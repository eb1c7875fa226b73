// The chain check alone, to profile it: N events inserted in bulk (one INSERT), sealed, then verifyChain timed.
// `npm run bench:verify -- --events 100000 [--threads 0,1,2]`: the check once per thread count given (by default
// verifyChain's own choice); with `node --cpu-prof --import tsx bench/verify-profile.ts` for a profile.
import { createPublicKey } from 'node:crypto';
import { parseArgs } from 'node:util';
import { generateSigningKey } from '../src/log/keys.ts';
import { Sealer } from '../src/log/sealer.ts';
import { sealState } from '../src/log/store.ts';
import { verifyChain } from '../src/log/verify-chain.ts';
import { createBenchDatabase } from './database.ts';

const { values } = parseArgs({ options: { events: { type: 'string', default: '100000' }, threads: { type: 'string' } } });
const count = Number(values.events);
const bench = await createBenchDatabase(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres', 4);
try {
  await bench.db.query(
    `INSERT INTO events (event_id, stream_name, stream_position, type, data, metadata)
     SELECT gen_random_uuid(), 'session-' || (i / 20), i % 20, 'ToolCallCompleted',
            jsonb_build_object('tool_call_id', 't' || i, 'result', jsonb_build_object('stdout', repeat('x', 200), 'exit_code', 0)),
            jsonb_build_object('actor', jsonb_build_object('role', 'agent', 'id', 'bot'), 'occurred_at', now()::text)
       FROM generate_series(1, $1) AS i`,
    [count],
  );
  const stop = new AbortController();
  let t = performance.now();
  const sealing = new Sealer(bench.db, { key: generateSigningKey(), origin: null, sealMs: 5, checkpointEvery: { events: 10_000, ms: null }, batch: 5_000 }).run(stop.signal);
  while ((await sealState(bench.db))?.size !== count) await new Promise((r) => setTimeout(r, 20));
  console.log(`sealed ${count} in ${((performance.now() - t) / 1000).toFixed(2)} s`);
  stop.abort();
  await sealing;
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
