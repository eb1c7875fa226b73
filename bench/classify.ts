// The classifier on the largest commands it accepts (MAX_COMMAND_BYTES), the worst shapes first: a long pipeline,
// brackets nested to the limit, one long list, an arithmetic chain, many words, a here-document. Each is timed in
// process (the part alone) and as `POST /classify` from a client (the server classifies on its worker threads),
// while a second client times `GET /healthz` beside it (what one large command costs everyone else); then four
// `POST /classify` at once, the health check beside them. `npm run bench:classify -- --runs 30`; PostgreSQL at
// DATABASE_URL (default 127.0.0.1:5432), a fresh database dropped at the end.
import { Agent } from 'node:http';
import { parseArgs } from 'node:util';
import { classify, MAX_COMMAND_BYTES } from '../src/domain/risk/index.ts';
import { MAX_NESTING } from '../src/domain/risk/parse.ts';
import { createBenchDatabase } from './database.ts';
import { call as callOn, percentile } from './latency.ts';
import { startServer } from './server.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '30' }, port: { type: 'string', default: '18791' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);

/** `unit` repeated (joined by `sep`) to fill MAX_COMMAND_BYTES. */
const fill = (unit: string, sep: string, head = '', tail = ''): string => {
  const room = MAX_COMMAND_BYTES - head.length - tail.length;
  return head + Array.from({ length: Math.floor((room + sep.length) / (unit.length + sep.length)) }, () => unit).join(sep) + tail;
};

const SHAPES: Readonly<Record<string, string>> = {
  'pipeline of 2 730 stages': fill('ls', ' | '),
  'list of 1 365 commands': fill('id', ' ; '),
  [`brackets nested ${MAX_NESTING} deep, then a long list`]: fill('id', ';', `${'('.repeat(MAX_NESTING)}id${')'.repeat(MAX_NESTING)};`),
  'arithmetic chain ((1+1+…))': fill('1', '+', '((', '))'),
  'one command, 2 730 words': fill('a', ' ', 'grep -e x'),
  'sh -c of a pipeline': fill('ls', ' | ', "sh -c '", "'"),
  'here-document of 8 KiB': `cat <<'EOF'\n${'x'.repeat(MAX_COMMAND_BYTES - 20)}\nEOF`,
};

// Four classifications and the health check each on a connection of their own.
const agent = new Agent({ keepAlive: true, maxSockets: 8 });
const call = (base: string, method: string, path: string, body?: unknown) => callOn(agent, base, method, path, body);

const fmt = (samples: readonly number[], p: number) => `${percentile(samples, p).toFixed(1)} ms`;

const database = await createBenchDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 2);
const server = await startServer(database.url, Number(values.port));
try {
  // The server's classifier threads start when first needed: started before anything is timed.
  await Promise.all([1, 2, 3, 4].map(() => call(server.base, 'POST', '/classify', { command: Object.values(SHAPES)[0] })));
  console.log(`| command (${MAX_COMMAND_BYTES} bytes at most, ${runs} runs) | bytes | verdict | classify() p50 / max | POST /classify p50 / max | GET /healthz beside it p50 / max | 4 × POST /classify at once p50 / max | GET /healthz beside the 4 p50 / max | of the 4 × runs, refused too-slow |`);
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const [name, command] of Object.entries(SHAPES)) {
    if (Buffer.byteLength(command) > MAX_COMMAND_BYTES) throw new Error(`${name}: ${Buffer.byteLength(command)} bytes, over the limit`);
    const alone: number[] = [];
    let verdict = '';
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const v = classify(command);
      alone.push(performance.now() - t0);
      verdict = `${v.risk_class} (${v.rule})`;
    }
    const client: number[] = [];
    const beside: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const answer = call(server.base, 'POST', '/classify', { command }).then((a) => {
        client.push(performance.now() - t0);
        return a;
      });
      // The health check starts just after the classification, so it waits for whatever the server is doing.
      const t1 = performance.now();
      await call(server.base, 'GET', '/healthz');
      beside.push(performance.now() - t1);
      const { status, text } = await answer;
      if (status !== 200) throw new Error(`${name}: POST /classify answered ${status} ${text.slice(0, 200)}`);
    }
    const four: number[] = [];
    let tooSlow = 0;
    const besideFour: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const answers = Promise.all([1, 2, 3, 4].map(() => call(server.base, 'POST', '/classify', { command }).then((a) => {
        four.push(performance.now() - t0);
        return a;
      })));
      const t1 = performance.now();
      await call(server.base, 'GET', '/healthz');
      besideFour.push(performance.now() - t1);
      for (const { status, text } of await answers) {
        if (status !== 200) throw new Error(`${name}: POST /classify answered ${status} ${text.slice(0, 200)}`);
        if ((JSON.parse(text) as { rule: string }).rule === 'too-slow') tooSlow++;
      }
    }
    console.log(`| ${name} | ${Buffer.byteLength(command)} | ${verdict} | ${fmt(alone, 50)} / ${fmt(alone, 100)} | ${fmt(client, 50)} / ${fmt(client, 100)} | ${fmt(beside, 50)} / ${fmt(beside, 100)} | ${fmt(four, 50)} / ${fmt(four, 100)} | ${fmt(besideFour, 50)} / ${fmt(besideFour, 100)} | ${tooSlow} |`);
  }
} finally {
  await server.stop();
  await database.drop();
}
