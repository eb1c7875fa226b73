// The write path as a client gets it: commands through HTTP to a running `nomos serve`, projectors live and
// read-your-writes on (each answer waits until the read models show it), beside the store alone doing the same
// appends in the same run. Each client owns a session and posts user messages to it (one event a command);
// throughput, p50 and p99 of the answers; meanwhile another client, in a process of its own, reads
// GET /sessions?limit=50; and, in a phase of its own, how long after an answer the list shows the command's
// effect (and how often it did not).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { EventStore } from '../src/ports/event-store.ts';
import { percentile } from './latency.ts';

// One pool of keep-alive sockets, large enough for every client and the reader at once.
const agent = new Agent({ keepAlive: true, maxSockets: 128 });

interface Answer {
  readonly status: number;
  readonly body: any;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** One HTTP request through node:http (less client-side work per request than fetch). */
function call(base: string, method: string, path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(`${base}${path}`, { method, agent, headers: payload === undefined ? { 'x-nomos-client': 'bench' } : { 'x-nomos-client': 'bench', 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: res.statusCode ?? 0, body: text === '' ? null : JSON.parse(text), headers: res.headers });
        } catch (error) {
          reject(new Error(`${method} ${path}: ${res.statusCode} not JSON: ${text.slice(0, 200)}`, { cause: error }));
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

export async function ok(base: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const answer = await call(base, method, path, body);
  if (answer.status < 200 || answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
  return answer;
}

export interface CommandRun {
  readonly clients: number;
  readonly commands: number;
  readonly seconds: number;
  readonly p50: number;
  readonly p99: number;
  /** Answers whose read-your-writes wait hit NOMOS_READ_WAIT_MS (X-Nomos-Read-Wait: timed-out). */
  readonly timedOut: number;
  /** The reader's GETs from a client process of its own while these wrote (null when not measured). */
  readonly reads: Reads | null;
  /** What stopped the server's event loop meanwhile. */
  readonly pauses: ServerPauses;
}

/** The server's pauses over a phase, from its GET /metrics (src/api/process-pauses.ts). */
export interface ServerPauses {
  /** How late the server's event loop ran over the phase, ms (a 10 ms timer's lateness). */
  readonly loopDelayP99: number;
  readonly loopDelayMax: number;
  /** Garbage collections a second, and the ms a second the loop stood still in them. */
  readonly gcPerSecond: number;
  readonly gcMsPerSecond: number;
}

interface Scrape {
  readonly at: number;
  readonly gcCount: number;
  readonly gcSeconds: number;
  readonly loopDelayP99: number;
  readonly loopDelayMax: number;
}

/** GET /metrics: the collections so far (every kind), and the loop's delay since the previous scrape (which this one starts again). */
async function scrape(base: string): Promise<Scrape> {
  const res = await fetch(`${base}/metrics`);
  if (!res.ok) throw new Error(`GET /metrics: ${res.status}`);
  const text = await res.text();
  const sum = (name: string) => [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce((total, m) => total + Number(m[1]), 0);
  return { at: performance.now(), gcCount: sum('nomos_gc_pauses_total'), gcSeconds: sum('nomos_gc_pause_seconds_total'), loopDelayP99: sum('nomos_event_loop_delay_p99_seconds'), loopDelayMax: sum('nomos_event_loop_delay_max_seconds') };
}

function pausesBetween(before: Scrape, after: Scrape): ServerPauses {
  const seconds = (after.at - before.at) / 1000;
  return {
    loopDelayP99: after.loopDelayP99 * 1000,
    loopDelayMax: after.loopDelayMax * 1000,
    gcPerSecond: (after.gcCount - before.gcCount) / seconds,
    gcMsPerSecond: ((after.gcSeconds - before.gcSeconds) * 1000) / seconds,
  };
}

export interface Reads {
  readonly requests: number;
  readonly p50: number;
  readonly p99: number;
}

const reads = (latencies: readonly number[]): Reads => ({ requests: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99) });

/** bench/reader.ts in a process of its own, reading once it has said ready; stop() ends it and hands back its latencies. */
async function readerProcess(base: string, path: string): Promise<{ stop(): Promise<number[]> }> {
  const script = fileURLToPath(new URL('./reader.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, base, path], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.value !== 'ready') {
    child.kill();
    throw new Error(`the reader process did not start (it said ${JSON.stringify(first.value)})`);
  }
  return {
    async stop() {
      child.stdin.end('stop\n');
      const last = await lines.next();
      if (last.done === true) throw new Error('the reader process ended without its figures');
      return JSON.parse(last.value) as number[];
    },
  };
}

/**
 * `clients` clients, each with a session of its own, post `perClient` user messages one after another; with
 * `reader` (a path), one more client GETs it one request after another until they are done. With `rate`
 * (commands a second, all clients together), each client sends at its share of it, from a random start,
 * instead of as soon as it is answered (a late answer's next command goes at once).
 */
export async function commandsThroughHttp(base: string, options: { clients: number; perClient: number; reader: string | null; rate?: number }): Promise<CommandRun> {
  const sessions = await Promise.all(Array.from({ length: options.clients }, async () => (await ok(base, 'POST', '/sessions')).body.session_id as string));
  // Warm-up: a few commands each, so connections, prepared statements and the JIT are in place.
  await Promise.all(sessions.map(async (id) => {
    for (let i = 0; i < 3; i++) await ok(base, 'POST', `/sessions/${id}/commands`, { type: 'post_user_message', text: `warm-up ${i}` });
  }));
  const latencies: number[] = [];
  let timedOut = 0;
  const reader = options.reader !== null ? await readerProcess(base, options.reader) : null;
  const before = await scrape(base);
  const started = performance.now();
  const every = options.rate === undefined ? 0 : (options.clients * 1000) / options.rate;
  await Promise.all(sessions.map(async (id, client) => {
    let due = started + Math.random() * every;
    for (let i = 0; i < options.perClient; i++) {
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      due += every;
      const sent = performance.now();
      const answer = await ok(base, 'POST', `/sessions/${id}/commands`, { type: 'post_user_message', text: `message ${i} from client ${client}` });
      latencies.push(performance.now() - sent);
      if (answer.headers['x-nomos-read-wait'] === 'timed-out') timedOut++;
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  const pauses = pausesBetween(before, await scrape(base));
  const readLatencies = await reader?.stop();
  return {
    clients: options.clients,
    commands: latencies.length,
    seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    timedOut,
    reads: readLatencies ? reads(readLatencies) : null,
    pauses,
  };
}

export interface Visibility {
  readonly commands: number;
  /** Milliseconds from a command's answer until GET /sessions showed its effect. */
  readonly p50: number;
  readonly p99: number;
  /** Reads right after an answer that did not show it yet (read-your-writes says: none). */
  readonly staleReads: number;
}

/**
 * Each of `clients` clients posts a message and, as soon as it is answered, reads GET /sessions (its own
 * session is among the newest) until the list shows the message counted; the time from answer to that read's
 * answer is the figure.
 */
export async function visibleInList(base: string, options: { clients: number; perClient: number }): Promise<Visibility> {
  const delays: number[] = [];
  let staleReads = 0;
  await Promise.all(Array.from({ length: options.clients }, async () => {
    const id = (await ok(base, 'POST', '/sessions')).body.session_id as string;
    for (let i = 1; i <= options.perClient; i++) {
      await ok(base, 'POST', `/sessions/${id}/commands`, { type: 'post_user_message', text: `visible ${i}` });
      const answered = performance.now();
      for (let attempt = 0; ; attempt++) {
        const list = await ok(base, 'GET', `/sessions?limit=${options.clients + 10}&fields=user_message_count`);
        const row = (list.body.sessions as Array<{ id: string; user_message_count: number }>).find((s) => s.id === id);
        if (row !== undefined && row.user_message_count >= i) break;
        staleReads++;
        if (attempt > 1_000) throw new Error(`session ${id}: message ${i} never showed in GET /sessions`);
      }
      delays.push(performance.now() - answered);
    }
  }));
  return { commands: delays.length, p50: percentile(delays, 50), p99: percentile(delays, 99), staleReads };
}

export interface StoreRun {
  readonly writers: number;
  readonly appends: number;
  readonly seconds: number;
  readonly p50: number;
  readonly p99: number;
}

/** The store alone, shaped like the commands above: each writer appends one event at a time to a stream of its own. */
export async function storeAlone(store: EventStore, options: { writers: number; perWriter: number }): Promise<StoreRun> {
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(Array.from({ length: options.writers }, async () => {
    const stream = `bench-${randomUUID()}`;
    let version = -1;
    for (let i = 0; i < options.perWriter; i++) {
      const sent = performance.now();
      const appended = await store.append(stream, [{ type: 'BenchMessagePosted', data: { text: `message ${i}` }, metadata: { actor: { role: 'operator', id: 'bench' } } }], {
        expectedVersion: version === -1 ? 'no_stream' : version,
      });
      latencies.push(performance.now() - sent);
      version = appended.nextExpectedVersion;
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  return { writers: options.writers, appends: latencies.length, seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}
