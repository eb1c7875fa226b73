// One client on a quiet server, to see what a lone command costs and where: `GET /healthz` (the floor: an HTTP
// exchange), a command answered as soon as it is stored (`Prefer: respond-async`), the same command answered once
// the read models show it (read-your-writes, the default), and `GET /sessions?limit=50`, interleaved so that a
// slower moment of the machine falls on all four alike. `npm run bench:lone -- --requests 500`; PostgreSQL at
// DATABASE_URL (default 127.0.0.1:5432), a fresh database dropped at the end.
import { Agent } from 'node:http';
import { parseArgs } from 'node:util';
import { createBenchDatabase } from './database.ts';
import { call as callOn, percentile } from './latency.ts';
import { startServer } from './server.ts';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '500' }, port: { type: 'string', default: '18790' } } });
const requests = Number(values.requests);
if (!Number.isInteger(requests) || requests < 1) throw new Error(`--requests must be a positive integer, got ${values.requests}`);

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const call = (base: string, method: string, path: string, body?: unknown, headers?: Record<string, string>) => callOn(agent, base, method, path, body, headers);


const database = await createBenchDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 2);
const server = await startServer(database.url, Number(values.port));
try {
  const base = server.base;
  const started = await call(base, 'POST', '/sessions', {});
  const id = (JSON.parse(started.text) as { session_id: string }).session_id;
  const message = { type: 'post_user_message', text: 'hello' };
  const kinds = {
    'GET /healthz': () => call(base, 'GET', '/healthz'),
    'command, Prefer: respond-async': () => call(base, 'POST', `/sessions/${id}/commands`, message, { prefer: 'respond-async' }),
    'command, read-your-writes': () => call(base, 'POST', `/sessions/${id}/commands`, message),
    'GET /sessions?limit=50': () => call(base, 'GET', '/sessions?limit=50'),
  };
  const times = new Map<string, number[]>(Object.keys(kinds).map((kind) => [kind, []]));
  // Warm-up: connections, prepared statements, the JIT.
  for (let i = 0; i < 50; i++) for (const run of Object.values(kinds)) await run();
  for (let i = 0; i < requests; i++) {
    for (const [kind, run] of Object.entries(kinds)) {
      const t0 = performance.now();
      const answer = await run();
      const ms = performance.now() - t0;
      if (answer.status >= 300) throw new Error(`${kind}: ${answer.status} ${answer.text.slice(0, 200)}`);
      times.get(kind)!.push(ms);
    }
  }
  console.log(`| request (one client, ${requests} each, interleaved) | p50 | p90 | p99 |`);
  console.log('|---|---|---|---|');
  for (const [kind, samples] of times) {
    console.log(`| ${kind} | ${[50, 90, 99].map((p) => `${percentile(samples, p).toFixed(2)} ms`).join(' | ')} |`);
  }
} finally {
  await server.stop();
  await database.drop();
}
