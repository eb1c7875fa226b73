// Many open event streams beside a large session (issue 32): a real `nomos serve` with auth on (ten operator
// tokens, NOMOS_MAX_STREAMS raised so that they hold the streams between them), a large session seeded through the
// API, and `--streams` GET /sessions/:id/stream live on `--sessions` sessions (the large one among them). GET /healthz
// is timed from one keep-alive client (a) alone, (b) with the streams open and idle, (c) with the streams open while
// writers append user messages to the sessions (the streams receiving them) and to the large session, and (d) with
// the same writers once the streams are closed (the control: what the writes cost without streams); the server's
// resident memory is read from /proc at each step. Each stream's data messages are counted and checked against what
// was written (every message reaches the streams of its session, and those only).
// `npm run bench:streams -- --streams 1000 --sessions 100 --large 3000 --requests 300`; the embedded default
// (PGlite in a temporary directory), or PostgreSQL when DATABASE_URL is set (a fresh database dropped at the end).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, type ClientRequest, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createBenchDatabase } from './database.ts';
import { call as callOn, percentile } from './latency.ts';

const { values } = parseArgs({
  options: {
    streams: { type: 'string', default: '1000' },
    sessions: { type: 'string', default: '100' },
    large: { type: 'string', default: '3000' },
    requests: { type: 'string', default: '300' },
    writers: { type: 'string', default: '4' },
    port: { type: 'string', default: '18792' },
  },
});
const count = (name: keyof typeof values) => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${values[name]}`);
  return n;
};
const STREAMS = count('streams');
const SESSIONS = count('sessions');
const LARGE = count('large');
const REQUESTS = count('requests');
const WRITERS = count('writers');
const PORT = count('port');
const PRINCIPALS = 10;
const CAP = Math.ceil(STREAMS / PRINCIPALS);

const BIN = fileURLToPath(new URL('../bin/nomos.mjs', import.meta.url));
const secret = (i: number) => `bench-streams-${i}-0123456789abcdefghijklmnopqrstuvwxyz`;
const as = (i: number) => ({ authorization: `Bearer ${secret(i)}` });

/** `nomos serve` as bench/server.ts starts it, but with tokens and the stream cap (that helper turns auth off). */
async function serve(databaseUrl: string | null, dataDir: string | null) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(PORT),
    HOST: '127.0.0.1',
    NOMOS_TOKENS: Array.from({ length: PRINCIPALS }, (_, i) => `operator:bench${i}:${secret(i)}`).join(','),
    NOMOS_MAX_STREAMS: String(CAP),
    OPENAI_API_KEY: '',
    OPENAI_BASE_URL: '',
  };
  if (databaseUrl === null) {
    delete env.DATABASE_URL;
    env.NOMOS_DATA_DIR = dataDir!;
  } else env.DATABASE_URL = databaseUrl;
  const child: ChildProcess = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const pid = child.pid;
  if (pid === undefined) throw new Error('nomos serve did not start');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${PORT}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nomos serve exited with ${child.exitCode}: ${stderr}`);
    if (await fetch(`${base}/healthz`, { headers: as(0) }).then((r) => r.ok, () => false)) break;
    if (Date.now() > deadline) throw new Error(`nomos serve did not answer /healthz within 60 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const memory = async (field: 'VmRSS' | 'VmHWM') => {
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1];
    if (kb === undefined) throw new Error(`no ${field} in /proc/${pid}/status`);
    return Number(kb) / 1024;
  };
  return {
    base,
    memory,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** One open stream: counts its data messages, and knows when the server ended it. */
interface Stream {
  readonly session: string;
  data: number;
  ended: boolean;
  readonly req: ClientRequest;
}

function openStream(base: string, session: string, principal: number): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/sessions/${session}/stream`, { agent: false, headers: { accept: 'text/event-stream', ...as(principal) } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`stream on ${session}: ${res.statusCode}`));
        res.resume();
        return;
      }
      const stream: Stream = { session, data: 0, ended: false, req };
      // "data: " (with its space) is only ever a field: the payload is JSON without spaces outside strings.
      let tail = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const text = tail + chunk;
        stream.data += text.split('data: ').length - 1;
        tail = text.slice(-5);
      });
      res.on('end', () => (stream.ended = true));
      res.on('error', () => (stream.ended = true));
      resolve(stream);
    });
    req.on('error', reject);
    req.end();
  });
}

const healthAgent = new Agent({ keepAlive: true, maxSockets: 1 });
const writeAgent = new Agent({ keepAlive: true, maxSockets: WRITERS + 8 });
const write = (base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => callOn(writeAgent, base, method, path, body, { ...as(0), 'x-nomos-client': 'bench', ...headers });

async function healthz(base: string): Promise<number[]> {
  for (let i = 0; i < 30; i++) await callOn(healthAgent, base, 'GET', '/healthz', undefined, as(9));
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = performance.now();
    const answer = await callOn(healthAgent, base, 'GET', '/healthz', undefined, as(9));
    times.push(performance.now() - t0);
    if (answer.status !== 200) throw new Error(`GET /healthz: ${answer.status} ${answer.text.slice(0, 200)}`);
  }
  return times;
}

async function post(base: string, session: string, text: string, headers: Record<string, string> = {}): Promise<void> {
  const answer = await write(base, 'POST', `/sessions/${session}/commands`, { type: 'post_user_message', text }, headers);
  if (answer.status >= 300) throw new Error(`post to ${session}: ${answer.status} ${answer.text.slice(0, 200)}`);
}

const postgres = process.env.DATABASE_URL;
const database = postgres ? await createBenchDatabase(postgres, 2) : null;
const dataDir = database ? null : await mkdtemp(join(tmpdir(), 'nomos-bench-streams-'));
const server = await serve(database?.url ?? null, dataDir);
const streams: Stream[] = [];
try {
  const { base } = server;
  const sessions: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const answer = await write(base, 'POST', '/sessions', {});
    if (answer.status !== 201) throw new Error(`POST /sessions: ${answer.status} ${answer.text.slice(0, 200)}`);
    sessions.push((JSON.parse(answer.text) as { session_id: string }).session_id);
  }
  // Session 0 is the large one: LARGE user messages, eight writers at a time, answered once stored.
  const large = sessions[0]!;
  const seedStarted = performance.now();
  let seeded = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (seeded < LARGE) await post(base, large, `seed ${seeded++}`, { prefer: 'respond-async' });
    }),
  );
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const rows: string[] = [];
  const row = async (what: string, times: number[], extra = '') => {
    const fmt = (p: number) => `${percentile(times, p).toFixed(2)} ms`;
    rows.push(`| ${what} | ${fmt(50)} | ${fmt(90)} | ${fmt(99)} | ${fmt(100)} | ${(await server.memory('VmRSS')).toFixed(0)} MB | ${extra} |`);
  };

  await row('(a) alone', await healthz(base));
  const peakBefore = await server.memory('VmHWM');

  // Stream k follows session k % SESSIONS (so the large one has its share), held by principal k % PRINCIPALS.
  const openStarted = performance.now();
  for (let from = 0; from < STREAMS; from += 100) {
    const batch = Array.from({ length: Math.min(100, STREAMS - from) }, (_, j) => from + j);
    streams.push(...(await Promise.all(batch.map((k) => openStream(base, sessions[k % SESSIONS]!, k % PRINCIPALS)))));
  }
  const openSeconds = (performance.now() - openStarted) / 1000;
  // Every principal now holds its cap: one more is refused.
  const refused = await callOn(healthAgent, base, 'GET', `/sessions/${sessions[1]}/stream`, undefined, as(0));
  if (refused.status !== 429) throw new Error(`stream past the cap: ${refused.status}, not 429`);

  await row(`(b) ${STREAMS} streams open, idle`, await healthz(base), `opened in ${openSeconds.toFixed(1)} s; one more past ${CAP} for one token refused 429`);

  // Writers: WRITERS - 1 append to the sessions in turn, one to the large session, until the health checks are done.
  const withWriters = async () => {
    const written = new Map<string, number>();
    let writing = true;
    let commands = 0;
    const writer = async (pick: (n: number) => string) => {
      for (let n = 0; writing; n++) {
        const session = pick(n);
        await post(base, session, `live ${n}`);
        written.set(session, (written.get(session) ?? 0) + 1);
        commands++;
      }
    };
    const started = performance.now();
    const writers = [
      writer(() => large),
      ...Array.from({ length: WRITERS - 1 }, (_, w) => writer((n) => sessions[1 + ((n * (WRITERS - 1) + w) % (SESSIONS - 1))]!)),
    ];
    const times = await healthz(base);
    writing = false;
    await Promise.all(writers);
    const seconds = (performance.now() - started) / 1000;
    return { times, written, commands, summary: `${commands} messages in ${seconds.toFixed(1)} s (${(commands / seconds).toFixed(0)}/s, ${written.get(large) ?? 0} to the large session)` };
  };
  const { times: busy, written, summary } = await withWriters();
  // Each message reaches the streams of its session: wait for the last deliveries, then check the counts.
  const expected = (s: Stream) => written.get(s.session) ?? 0;
  const deadline = Date.now() + 30_000;
  while (streams.some((s) => s.data < expected(s)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const delivered = streams.reduce((sum, s) => sum + s.data, 0);
  const due = streams.reduce((sum, s) => sum + expected(s), 0);
  const wrong = streams.filter((s) => s.data !== expected(s)).length;
  if (streams.some((s) => s.ended)) throw new Error('a stream ended while the server ran');
  await row(
    `(c) ${STREAMS} streams open, ${WRITERS} writers`,
    busy,
    `${summary}; ${delivered} of ${due} deliveries${wrong ? `, ${wrong} streams off` : ', each stream exactly its own'}`,
  );

  // The control: the same writers with no stream open (the clients leave; the server sees them go).
  for (const s of streams) s.req.destroy();
  const control = await withWriters();
  await row(`(d) no stream open, ${WRITERS} writers (control)`, control.times, control.summary);

  console.log(`nomos serve on ${database ? 'PostgreSQL' : 'PGlite (embedded default)'}, auth on (${PRINCIPALS} tokens, NOMOS_MAX_STREAMS=${CAP}); ${SESSIONS} sessions, the large one seeded with ${LARGE} messages in ${seedSeconds.toFixed(1)} s`);
  console.log(`| GET /healthz, one keep-alive client, ${REQUESTS} requests | p50 | p90 | p99 | max | server RSS after | |`);
  console.log('|---|---|---|---|---|---|---|');
  for (const line of rows) console.log(line);
  console.log(`server peak RSS (VmHWM): ${peakBefore.toFixed(0)} MB before the streams opened, ${(await server.memory('VmHWM')).toFixed(0)} MB at the end`);
  if (wrong) process.exitCode = 1;
} finally {
  // The server ends the streams as it stops; a client still open is cut.
  await server.stop();
  for (const s of streams) s.req.destroy();
  healthAgent.destroy();
  writeAgent.destroy();
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}
