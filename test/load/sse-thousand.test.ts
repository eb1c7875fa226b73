// 1 000 Server-Sent Event streams on many sessions, ten of them on a large session that keeps growing, and
// /healthz stays fast beside them: a real `nomos serve` process over real sockets. Each stream wakes only for
// its own session and reads only what follows its position; before, every append woke all of them to re-read
// their whole session. The bound is generous (a loaded 2-core machine), far under what the old code took.
// Needs ~1 100 file descriptors in this process (ulimit -n); the per-principal cap is raised for the test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, postgresDatabase } from '../support/databases.ts';
import { type ServeProcess, startServeProcess } from '../support/serve-process.ts';
import { SseClient } from '../support/sse-client.ts';

const STREAMS = 1_000;
const SESSIONS = 99;
const ON_LARGE = 10;
const LARGE_EVENTS = 1_500;
const APPENDS_WHILE_MEASURED = 150;
/** The slowest /healthz answer allowed while the large session grows. */
const HEALTHZ_MAX_MS = 1_500;

describe(`${STREAMS} SSE streams beside a growing large session`, () => {
  let server: ServeProcess;
  let testDb: TestDb | null = null;
  let dataDir: string | null = null;
  const clients: SseClient[] = [];

  beforeAll(async () => {
    const env: Record<string, string> = { NOMOS_MAX_STREAMS: String(STREAMS + 100) };
    if (postgresDatabase) {
      testDb = await postgresDatabase.open();
      env.DATABASE_URL = testDb.url!;
    } else {
      dataDir = mkdtempSync(join(tmpdir(), 'nomos-sse-1000-'));
      env.NOMOS_DATA_DIR = dataDir;
    }
    server = await startServeProcess(env, { readyMs: 60_000 });
  }, 90_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.abort()));
    await server?.stop();
    await testDb?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  const say = async (session: string, text: string) => {
    const res = await server.request('POST', `/sessions/${session}/commands`, { type: 'post_user_message', text });
    if (res.status !== 200) throw new Error(`post_user_message answered ${res.status}: ${JSON.stringify(res.body)}`);
  };

  it(`/healthz answers within ${HEALTHZ_MAX_MS} ms while ${APPENDS_WHILE_MEASURED} appends land on the large session`, async () => {
    const large = (await server.request('POST', '/sessions')).body.session_id as string;
    const filler = 'x'.repeat(2_000);
    for (let lane = 0; lane < LARGE_EVENTS; lane += 10) await Promise.all(Array.from({ length: 10 }, (_, i) => say(large, `${lane + i} ${filler}`)));
    const sessions = [large];
    for (let i = 0; i < SESSIONS; i++) sessions.push((await server.request('POST', '/sessions')).body.session_id as string);

    // Ten on the large session, the rest spread over the others; opened in batches to spare the accept queue.
    const targets = Array.from({ length: STREAMS }, (_, i) => (i < ON_LARGE ? large : sessions[1 + (i % SESSIONS)]!));
    for (let i = 0; i < targets.length; i += 100) {
      clients.push(...(await Promise.all(targets.slice(i, i + 100).map((s) => SseClient.connect(`${server.url}/sessions/${s}/stream?after=0`)))));
    }
    expect(clients.filter((c) => c.status === 200)).toHaveLength(STREAMS);
    // Every stream has caught up (the large ones replayed their session) before the measure starts.
    await Promise.all(clients.slice(0, ON_LARGE).map((c) => c.waitFor('the replay', (m) => m.filter((x) => x.data?.type === 'user_message').length >= LARGE_EVENTS, 120_000)));

    const latencies: number[] = [];
    let appending = true;
    const measuring = (async () => {
      while (appending) {
        const start = performance.now();
        const res = await fetch(`${server.url}/healthz`);
        await res.arrayBuffer();
        latencies.push(performance.now() - start);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    for (let i = 0; i < APPENDS_WHILE_MEASURED; i++) await say(large, `live ${i} ${filler}`);
    await Promise.all(clients.slice(0, ON_LARGE).map((c) => c.waitFor('the live appends', (m) => m.some((x) => x.data?.data?.text?.startsWith(`live ${APPENDS_WHILE_MEASURED - 1} `)), 120_000)));
    appending = false;
    await measuring;

    const sorted = [...latencies].sort((a, b) => a - b);
    const p50 = sorted[Math.floor(sorted.length / 2)]!;
    const max = sorted.at(-1)!;
    console.log(`/healthz beside ${STREAMS} streams: ${latencies.length} probes, p50 ${p50.toFixed(1)} ms, max ${max.toFixed(1)} ms`);
    expect(latencies.length).toBeGreaterThan(5);
    expect(max).toBeLessThan(HEALTHZ_MAX_MS);
  }, 600_000);
});
