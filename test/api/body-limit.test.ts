// A body over the server's limit is answered 413 with a problem+json that Node's own fetch can read — just over
// the limit, far over it, and sent slowly without a length — rather than a reset connection; nothing is appended.
// The server is a real `nomos serve` process: in this process the client's writes and the server's answer
// would take turns on one event loop, and the race that resets the connection would never be run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, databases } from '../support/databases.ts';
import { type ServeProcess, startServeProcess } from '../support/serve-process.ts';

const LIMIT = 64 * 1024;

/** A JSON body of about `bytes` bytes: a user message of that length. */
const bodyOf = (bytes: number) => JSON.stringify({ type: 'post_user_message', text: 'x'.repeat(bytes) });

/** The same body as a stream of small chunks with a pause between them, sent without a Content-Length. */
function slowly(text: string, chunks: number, pauseMs: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const size = Math.ceil(bytes.length / chunks);
  let at = 0;
  return new ReadableStream({
    async pull(controller) {
      if (at >= bytes.length) {
        controller.close();
        return;
      }
      if (at > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      controller.enqueue(bytes.subarray(at, at + size));
      at += size;
    },
  });
}

describe.each(databases)('a body over the limit ($name)', (database) => {
  let server: ServeProcess;
  let testDb: TestDb | null = null;
  let dataDir: string | null = null;
  let session: string;
  const head = async () => (await server.request('GET', '/healthz')).body.head_position as number;

  beforeAll(async () => {
    const env: Record<string, string> = { NOMOS_BODY_LIMIT: String(LIMIT) };
    if (database.name === 'postgres') {
      testDb = await database.open();
      env.DATABASE_URL = testDb.url!;
    } else {
      dataDir = mkdtempSync(join(tmpdir(), 'nomos-413-'));
      env.NOMOS_DATA_DIR = dataDir;
    }
    server = await startServeProcess(env, { readyMs: 60_000 });
    session = (await server.request('POST', '/sessions')).body.session_id;
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await testDb?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const sizes: Array<[string, () => string | ReadableStream<Uint8Array>, RequestInit?]> = [
    ['one byte over', () => bodyOf(LIMIT)],
    ['ten times over', () => bodyOf(10 * LIMIT)],
    ['sixty times over', () => bodyOf(60 * LIMIT)],
    ['sent slowly without a length, three times over', () => slowly(bodyOf(3 * LIMIT), 20, 20), { duplex: 'half' }],
  ];

  it.each(sizes)('%s: fetch reads a 413 problem naming the limit', async (_name, body, init = {}) => {
    const before = await head();
    const res = await fetch(`${server.url}/sessions/${session}/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(), ...init });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const problem = (await res.json()) as { code: string; detail: string };
    expect(problem.code).toBe('body_too_large');
    expect(problem.detail).toContain(String(LIMIT));
    expect(await head()).toBe(before);
  });

  it('still answers the next request after a refused body', async () => {
    await fetch(`${server.url}/sessions/${session}/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodyOf(10 * LIMIT) }).then((r) => r.arrayBuffer());
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
  });
});
