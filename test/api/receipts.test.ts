// Receipts over real HTTP on both databases: a real approval (a config mutation an agent asked for, approved by an
// operator, run by the fleet stand-in) fetched once the checkpoint covers it, then checked offline after the server
// and its database are gone, by verifyReceiptCommand and by an RFC 9162 walk of the test's own; before a checkpoint
// covers it 503 with Retry-After; unknown 404, bad id 400; nothing appended by any of these.
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { verifyReceiptCommand } from '../../src/cli/verify-receipt.ts';
import { generateSigningKey, publicKeyPem } from '../../src/log/keys.ts';
import { leafHash, verifyInclusion } from '../../src/log/merkle.ts';
import { openNote } from '../../src/log/note.ts';
import { databases } from '../support/databases.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

const OPERATOR = 'alice-token-0123456789abcdef-0123456';
const AGENT = 'bot-token-0123456789abcdef-01234567';
const tokens = parseTokens(`operator:alice:${OPERATOR},agent:bot:${AGENT}`);
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const b64 = (s: string) => Buffer.from(s, 'base64');
const COMMAND = 'chown :0 /srv/data';

async function fleetAndSession(server: TestServer): Promise<string> {
  const reg = await server.request('POST', '/entities', {
    entities: [
      { slug: 'host:peer', type: 'host', ssh: { host: '127.0.0.1', port: 22, user: 'root' } },
      { slug: 'lxc:box', type: 'lxc', parent: 'host:peer', pve_id: 132 },
    ],
  }, as(OPERATOR));
  expect(reg.status, JSON.stringify(reg.body)).toBe(200);
  return (await server.request('POST', '/sessions', undefined, as(AGENT))).body.session_id as string;
}

const eventCount = async (server: TestServer) => (await server.runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n;

describe.each(databases)('receipts on $name', (database) => {
  let server: TestServer;
  let closed = false;
  let key: KeyObject;
  let dir: string;
  let approvalId: string;
  let executionId: string;
  let saved: { approval: string; execution: string };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nomos-receipt-'));
    key = generateSigningKey();
    server = await startTestServer(database, { tokens, executor: instantExecutor() });
    const session = await fleetAndSession(server);
    const command = async (body: object) => {
      const res = await server.request('POST', `/sessions/${session}/commands`, body, as(AGENT));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    };
    await command({ type: 'set_goal', goal: 'give group root the data directory' });
    await command({ type: 'propose_plan', steps: [{ title: 'hand /srv/data to group 0', command: COMMAND, target: 'lxc:box' }, { title: 'check the backup reads it' }] });
    const queued = await command({ type: 'run', target: 'lxc:box', command: COMMAND });
    expect(queued).toMatchObject({ status: 'approval_required', verdict: { risk_class: 'config_mutation' } });
    approvalId = queued.approval_id as string;
    executionId = queued.execution_id as string;
  }, 60_000);
  afterAll(async () => {
    if (!closed) await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 503 receipt_not_ready with Retry-After while no checkpoint covers the events, writing nothing', async () => {
    const before = await eventCount(server);
    for (const path of [`/approvals/${approvalId}/receipt`, `/executions/${executionId}/receipt`]) {
      const res = await server.request('GET', path, undefined, as(OPERATOR));
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body).toMatchObject({ code: 'receipt_not_ready', retry_after_seconds: expect.any(Number) });
      expect(res.body.detail).toMatch(/no checkpoint/);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(await eventCount(server)).toBe(before);
  });

  it('serves the approval and execution receipts once the approved command ran and a checkpoint covers it', async () => {
    const approved = await server.request('POST', `/approvals/${approvalId}/approve`, undefined, as(OPERATOR));
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    await until('the approved execution ran', async () => ((await server.request('GET', `/executions/${executionId}`, undefined, as(OPERATOR))).body.status === 'succeeded' ? true : undefined));
    await server.runtime.startSealer({ key, sealMs: 20, checkpointEvery: { events: 1, ms: null } });
    const head = await eventCount(server);
    await until('a checkpoint covers every event', async () => {
      const log = (await server.request('GET', '/log', undefined, as(OPERATOR))).body;
      return log.checkpoint?.tree_size >= head && log.lag_events === 0 ? true : undefined;
    });
    const before = await eventCount(server);
    const approval = await server.request('GET', `/approvals/${approvalId}/receipt`, undefined, as(OPERATOR));
    expect(approval.status, JSON.stringify(approval.body)).toBe(200);
    const receipt = approval.body;
    expect(Object.keys(receipt).sort()).toEqual(['checkpoint', 'entries', 'format', 'id', 'kind', 'origin', 'public_key', 'summary', 'tree_size']);
    expect(receipt).toMatchObject({ format: 'nomos-receipt/1', kind: 'approval', id: approvalId, public_key: publicKeyPem(key) });
    expect(receipt.checkpoint).toBe((await server.request('GET', '/log/checkpoint', undefined, as(OPERATOR))).body);
    expect(receipt.entries.map((e: { type: string }) => e.type)).toEqual([
      'GoalSet', 'PlanProposed', 'ExecutionRequested', 'ApprovalRequested', 'ApprovalGranted', 'ExecutionStarted', 'ExecutionSucceeded',
    ]);
    expect(receipt.summary).toMatchObject({
      command: COMMAND, target: 'lxc:box', risk_class: 'config_mutation', decision: 'ask', requested_by: { role: 'agent', id: 'bot' },
      approval: { id: approvalId, status: 'granted', by: { role: 'operator', id: 'alice' }, reason: null },
      execution: 'succeeded', exit_code: 0, goal: 'give group root the data directory', plan: ['hand /srv/data to group 0', 'check the backup reads it'],
    });
    const execution = await server.request('GET', `/executions/${executionId}/receipt`, undefined, as(OPERATOR));
    expect(execution.status, JSON.stringify(execution.body)).toBe(200);
    expect(execution.body).toMatchObject({ kind: 'execution', id: executionId, summary: { ...receipt.summary } });
    expect(await eventCount(server)).toBe(before);
    saved = { approval: join(dir, 'approval.json'), execution: join(dir, 'execution.json') };
    await writeFile(saved.approval, JSON.stringify(approval.body, null, 2));
    await writeFile(saved.execution, JSON.stringify(execution.body));
  }, 60_000);

  it('answers an unknown id 404 and a bad id 400, naming it, writing nothing', async () => {
    const before = await eventCount(server);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const cases: [string, number, string][] = [
      [`/approvals/${unknown}/receipt`, 404, 'approval_not_found'],
      [`/executions/${unknown}/receipt`, 404, 'execution_not_found'],
      [`/approvals/not-a-uuid/receipt`, 400, 'validation_failed'],
      [`/executions/42/receipt`, 400, 'validation_failed'],
      [`/approvals/${approvalId}/receipt?extra=1`, 400, 'validation_failed'],
    ];
    for (const [path, status, code] of cases) {
      const res = await server.request('GET', path, undefined, as(OPERATOR));
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status, code });
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    }
    expect(await eventCount(server)).toBe(before);
  });

  it('checks offline, with the server stopped and its database closed, in words and by an RFC 9162 walk', async () => {
    await server.close();
    closed = true;
    const keyFile = join(dir, 'log.pem');
    await writeFile(keyFile, publicKeyPem(key));
    const trusted = await verifyReceiptCommand(saved.approval, { key: keyFile });
    expect(trusted.exitCode, trusted.lines.join('\n')).toBe(0);
    expect(trusted.lines[0]).toBe(`VERIFIED: approval ${approvalId}: operator:alice approved \`${COMMAND}\` on lxc:box; it succeeded, exit code 0`);
    expect(trusted.lines.join('\n')).toMatch(/requested by agent:bot .* config_mutation, decision ask/);
    expect(trusted.lines.join('\n')).toMatch(/goal: give group root the data directory/);
    expect(trusted.lines.at(-1)).toMatch(/proven: 7 events .* checkpoint of tree size \d+, signed by the key you supplied$/);
    const own = await verifyReceiptCommand(saved.execution, {});
    expect(own.exitCode, own.lines.join('\n')).toBe(0);
    expect(own.lines.join('\n')).toMatch(/not independently supplied/);
    const json = await verifyReceiptCommand(saved.execution, { key: keyFile, json: true });
    expect(JSON.parse(json.lines.join('\n'))).toMatchObject({ verified: true, key_supplied: true, kind: 'execution', summary: { exit_code: 0 } });

    // The test's own walk: the note opened with the key it generated, each leaf hashed and walked to the root.
    const receipt = JSON.parse(await readFile(saved.approval, 'utf8'));
    const { checkpoint } = openNote(receipt.checkpoint, receipt.origin, createPublicKey(publicKeyPem(key)));
    expect(checkpoint.size).toBe(receipt.tree_size);
    for (const entry of receipt.entries) {
      const leaf = b64(entry.leaf);
      expect(verifyInclusion(entry.leaf_index, checkpoint.size, leafHash(leaf), entry.inclusion.map(b64), checkpoint.root), `position ${entry.position}`).toBe(true);
      const envelope = JSON.parse(leaf.toString('utf8'));
      expect(envelope).toMatchObject({ position: entry.position, type: entry.type });
      expect(envelope.data_sha256).toBe(createHash('sha256').update(canonicalize(entry.data)!).digest('hex'));
    }
  });
});

describe.each(databases)('a receipt sealed but past the latest checkpoint on $name', (database) => {
  let server: TestServer;
  let session: string;
  beforeAll(async () => {
    server = await startTestServer(database, { tokens, executor: instantExecutor() });
    session = await fleetAndSession(server);
  }, 60_000);
  afterAll(async () => server?.close());

  it('answers 503 naming the leaf and the checkpoint, with Retry-After, writing nothing', async () => {
    // One checkpoint at the first round, then none for an hour: what comes after is sealed, never checkpointed.
    await server.runtime.startSealer({ key: generateSigningKey(), sealMs: 20, checkpointEvery: { events: null, ms: 3_600_000 } });
    const first = await until('the first checkpoint', async () => (await server.request('GET', '/log', undefined, as(OPERATOR))).body.checkpoint?.tree_size as number | undefined);
    const ran = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target: 'host:peer', command: 'uptime' }, as(AGENT));
    expect(ran.body, JSON.stringify(ran.body)).toMatchObject({ status: 'succeeded' });
    await until('the run sealed', async () => {
      const log = (await server.request('GET', '/log', undefined, as(OPERATOR))).body;
      return log.lag_events === 0 && log.tree_size > first ? true : undefined;
    });
    const before = await eventCount(server);
    const res = await server.request('GET', `/executions/${ran.body.execution_id}/receipt`, undefined, as(OPERATOR));
    expect(res.status, JSON.stringify(res.body)).toBe(503);
    expect(res.body.code).toBe('receipt_not_ready');
    expect(res.body.detail).toMatch(new RegExp(`past the latest checkpoint \\(tree size ${first}\\)`));
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await eventCount(server)).toBe(before);
  }, 60_000);
});
