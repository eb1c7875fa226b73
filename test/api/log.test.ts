// The verifiable log's API over real HTTP on both databases: the checkpoint served byte for byte as signed and
// opened with the served public key, proofs that an RFC 9162 verifier accepts against it, and bad input (a
// position past the tree, tree_size 0, non-numbers, from past to) answered 400 naming it, with nothing written.
import { createPublicKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningKey } from '../../src/log/keys.ts';
import { leafHash, verifyConsistency, verifyInclusion } from '../../src/log/merkle.ts';
import { openNote } from '../../src/log/note.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

const b64 = (s: string) => Buffer.from(s, 'base64');

describe.each(databases)('the log API on $name', (database) => {
  let server: TestServer;
  let sessions: string[];

  beforeAll(async () => {
    server = await startTestServer(database);
    const unsealed = await server.request('GET', '/log/checkpoint');
    expect(unsealed.status).toBe(404);
    expect(unsealed.body.code).toBe('no_checkpoint');
    expect((await server.request('GET', '/log/public-key')).body.code).toBe('not_sealed');
    sessions = [];
    for (let i = 0; i < 3; i++) {
      const created = await server.request('POST', '/sessions');
      expect(created.status).toBe(201);
      sessions.push(created.body.session_id as string);
    }
    await server.runtime.startSealer({ key: generateSigningKey(), sealMs: 20, checkpointEvery: { events: 1, ms: null } });
    const head = await server.request('GET', '/log');
    await until('everything sealed', async () => {
      const log = await server.request('GET', '/log');
      return log.body.checkpoint?.tree_size >= 3 && log.body.lag_events === 0 ? true : undefined;
    });
    expect(head.status).toBe(200);
  }, 60_000);
  afterAll(async () => server?.close());

  it('serves the latest checkpoint as signed, opened by the served key, and its state', async () => {
    const note = await server.request('GET', '/log/checkpoint');
    expect(note.status).toBe(200);
    expect(note.headers.get('content-type')).toMatch(/^text\/plain/);
    const pem = await server.request('GET', '/log/public-key');
    expect(pem.body).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    const log = (await server.request('GET', '/log')).body;
    const opened = openNote(note.body as string, log.origin as string, createPublicKey(pem.body as string));
    expect(opened.checkpoint.size).toBe(log.tree_size);
    expect(opened.checkpoint.root.toString('base64')).toBe(log.checkpoint.root);
    expect(log).toMatchObject({ sealed: true, lag_events: 0, last_position: log.head_position });
    const list = (await server.request('GET', '/log/checkpoints?limit=2')).body;
    expect(list.checkpoints[0].note).toBe(note.body);
    expect(list.checkpoints.map((c: { tree_size: number }) => c.tree_size)).toEqual([...list.checkpoints.map((c: { tree_size: number }) => c.tree_size)].sort((a, b) => b - a));
  });

  it('proves every event included in the checkpointed tree and each checkpoint consistent with the latest', async () => {
    const log = (await server.request('GET', '/log')).body;
    const root = b64(log.checkpoint.root as string);
    const size = log.checkpoint.tree_size as number;
    const events = (await server.request('GET', `/sessions/${sessions[1]}/events`)).body.events as { position: number; type: string }[];
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) {
      const proof = await server.request('GET', `/log/proof/inclusion?position=${e.position}&tree_size=${size}`);
      expect(proof.status).toBe(200);
      const leaf = JSON.parse(b64(proof.body.leaf as string).toString('utf8'));
      expect(leaf).toMatchObject({ position: e.position, type: e.type, stream: `session-${sessions[1]}` });
      expect(verifyInclusion(proof.body.leaf_index, size, leafHash(b64(proof.body.leaf)), (proof.body.hashes as string[]).map(b64), root)).toBe(true);
    }
    const defaulted = await server.request('GET', `/log/proof/inclusion?position=${events[0]!.position}`);
    expect(defaulted.body.tree_size).toBe(size);
    for (const older of (await server.request('GET', `/log/checkpoints?before=${size}`)).body.checkpoints as { tree_size: number; root: string }[]) {
      const proof = await server.request('GET', `/log/proof/consistency?from=${older.tree_size}&to=${size}`);
      expect(proof.status).toBe(200);
      expect(verifyConsistency(older.tree_size, size, b64(older.root), root, (proof.body.hashes as string[]).map(b64))).toBe(true);
    }
  });

  it('answers bad input 400 (or 404 for no event there) naming it, and writes nothing', async () => {
    const count = async () => (await server.runtime.db.query<{ e: number; c: number }>('SELECT (SELECT count(*)::int FROM events) AS e, (SELECT count(*)::int FROM log_checkpoints) AS c')).rows[0];
    const before = await count();
    const size = (await server.request('GET', '/log')).body.tree_size as number;
    const head = (await server.request('GET', '/log')).body.last_position as number;
    const cases: [string, number, string | RegExp][] = [
      [`/log/proof/inclusion?position=1&tree_size=0`, 400, 'invalid_tree_size'],
      [`/log/proof/inclusion?position=1&tree_size=${size + 1}`, 400, 'tree_size_past_log'],
      [`/log/proof/inclusion?position=${head}&tree_size=1`, 400, 'position_past_tree'],
      [`/log/proof/inclusion?position=${head + 1000}&tree_size=${size}`, 404, 'position_not_sealed'],
      [`/log/proof/inclusion?position=abc&tree_size=${size}`, 400, /position/],
      [`/log/proof/inclusion?position=1.5`, 400, /position/],
      [`/log/proof/inclusion?position=-1`, 400, /position/],
      [`/log/proof/inclusion?tree_size=1`, 400, /position/],
      [`/log/proof/inclusion?position=1&tree_size=1&extra=1`, 400, /extra/],
      [`/log/proof/consistency?from=0&to=${size}`, 400, 'invalid_tree_size'],
      [`/log/proof/consistency?from=2&to=1`, 400, 'invalid_range'],
      [`/log/proof/consistency?from=1&to=${size + 1}`, 400, 'tree_size_past_log'],
      [`/log/proof/consistency?from=x&to=2`, 400, /from/],
      [`/log/checkpoints?limit=0`, 400, /limit/],
    ];
    for (const [path, status, named] of cases) {
      const answer = await server.request('GET', path);
      expect({ path, status: answer.status }).toEqual({ path, status });
      expect(answer.headers.get('content-type')).toMatch(/problem\+json/);
      if (typeof named === 'string') expect(answer.body.code).toBe(named);
      else expect(JSON.stringify(answer.body)).toMatch(named);
    }
    expect(await count()).toEqual(before);
  });
});
