// Two real `nomos serve` processes on one PostgreSQL, a real sshd host and the scripted model: whichever server
// takes the turn, the approval or the crash, the command runs once and the agent carries on. Needs PostgreSQL
// (two processes cannot share an embedded PGlite directory; its lock refuses the second): without DATABASE_URL
// the suite is reported skipped, saying so.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlEventStore } from '../../src/adapters/eventstore/sql.ts';
import { runSessionCommand } from '../../src/commands/session.ts';
import { postgresDatabase, type TestDb } from '../support/databases.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { type ServeProcess, startServeProcess } from '../support/serve-process.ts';
import { type SshPeer, startSshPeer, sshOf } from '../support/ssh-peer.ts';
import { SseClient } from '../support/sse-client.ts';
import { readSse } from '../support/sse-reader.ts';
import { until } from '../support/until.ts';

const call = (name: string, args: unknown) => ({ toolCalls: [{ name, arguments: args }] });
type Event = { type: string; data: any; metadata: any; stream_position: number };

describe.skipIf(postgresDatabase === null)('two servers on one PostgreSQL (skipped without DATABASE_URL: two processes cannot share PGlite)', () => {
  let testDb: TestDb;
  let peer: SshPeer;
  let llm: FakeOpenAi;
  let env: Record<string, string>;
  const servers: ServeProcess[] = [];
  let a: ServeProcess;
  let b: ServeProcess;

  const start = async () => {
    const server = await startServeProcess(env);
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    testDb = await postgresDatabase!.open();
    peer = await startSshPeer();
    llm = await startFakeOpenAi();
    const dir = mkdtempSync(join(tmpdir(), 'nomos-two-'));
    const key = join(dir, 'id_ed25519');
    writeFileSync(key, peer.privateKey, { mode: 0o600 });
    env = {
      DATABASE_URL: testDb.url!,
      NOMOS_SSH_KEY: key,
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'test-key',
      NOMOS_MODEL: 'scripted',
      NOMOS_RUN_WAIT_MS: '3000',
      NOMOS_SWEEP_MS: '200',
      NOMOS_HEARTBEAT_MS: '200',
      NOMOS_LOST_AFTER_MS: '1500',
      // How long an approved command may wait for the approving server to start it before another's sweep does.
      // 500 ms was too short on a loaded 2-core CI machine: the approving server had not claimed it yet, another
      // server's sweep did, and the operator's approve answered 409 (the command still ran exactly once).
      NOMOS_APPROVED_GRACE_MS: '2000',
      NOMOS_TURN_LEASE_MS: '2000',
      NOMOS_DATA_DIR: join(dir, 'unused'),
    };
    [a, b] = await Promise.all([start(), start()]);
    const reg = await a.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh: sshOf(peer) });
    expect(reg.status).toBe(200);
  }, 90_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await llm?.close();
    await peer?.close();
    await testDb?.close();
  });

  const chat = async (server: ServeProcess, message: string, sessionId?: string) => {
    const res = await fetch(`${server.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message, ...(sessionId && { session_id: sessionId }) }) });
    expect(res.status, await (res.status === 200 ? Promise.resolve('') : res.text())).toBe(200);
    return (await readSse(res, (m) => m.type === 'done')).filter((m) => m.type !== 'token');
  };
  const events = async (server: ServeProcess, sessionId: string): Promise<Event[]> => (await server.request('GET', `/sessions/${sessionId}/events`)).body.events;
  const of = (all: Event[], type: string, executionId?: string) => all.filter((e) => e.type === type && (executionId === undefined || e.data.execution_id === executionId));
  /** Waits until the session holds a text the agent wrote after the turn with this trigger ended. */
  const continued = (server: ServeProcess, sessionId: string, text: string) =>
    until(`the agent to carry on with "${text}"`, async () => {
      const all = await events(server, sessionId);
      const turn = all.find((e) => e.type === 'TurnStarted' && e.data.trigger === 'execution_finished');
      const said = all.find((e) => e.type === 'AssistantMessageRecorded' && e.data.text === text);
      const ended = turn && all.find((e) => e.type === 'TurnEnded' && e.data.turn_id === turn.data.turn_id);
      return turn && said && ended ? all : undefined;
    });

  /** A turn on `turnOn` that stops at an approval, approved on `approveOn`: runs once, and the agent carries on. */
  const approvalElsewhere = async (turnOn: ServeProcess, approveOn: ServeProcess) => {
    const marker = `/tmp/nomos-two-${randomUUID()}`;
    llm.script(call('run', { target: 'host:peer', command: `touch ${marker}` }), { content: 'That change needs your approval.' });
    const first = await chat(turnOn, 'touch the marker file');
    const waiting = first.find((m) => m.type === 'tool_result')!.data.result;
    expect(waiting.status, JSON.stringify(waiting)).toBe('approval_required');
    const sessionId = first[0]!.session_id;
    llm.script({ content: 'The marker file is in place.' });
    const approved = await approveOn.request('POST', `/approvals/${waiting.approval_id}/approve`);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.execution.status).toBe('succeeded');
    const all = await continued(turnOn, sessionId, 'The marker file is in place.');
    expect(of(all, 'ExecutionStarted', waiting.execution_id)).toHaveLength(1);
    expect(of(all, 'ExecutionSucceeded', waiting.execution_id)).toHaveLength(1);
    // The model was told, in the turn that carried on, that the execution had ended.
    expect(JSON.stringify(llm.requests.at(-1)!.messages)).toContain(marker);
  };

  it('a turn on A stopped at an approval given on B: the command runs once and the agent carries on', async () => {
    await approvalElsewhere(a, b);
  });

  it('and the reverse: a turn on B, the approval on A', async () => {
    await approvalElsewhere(b, a);
  });

  it('a /chat to B while A runs the session’s turn is refused turn_running, naming A; there are never two loops; B’s clients see A’s tokens', async () => {
    llm.script({ content: 'Thinking it over, slowly.', delayMs: 1_000, chunks: 3 });
    const sessionId = (await a.request('POST', '/sessions')).body.session_id as string;
    const watching = fetch(`${b.url}/sessions/${sessionId}/stream?until=done`).then((res) => readSse(res, (m) => m.type === 'done'));
    await new Promise((r) => setTimeout(r, 300)); // the stream on B listens before the turn starts
    const onA = chat(a, 'take your time', sessionId);
    await until('A’s turn to start', async () => (of(await events(a, sessionId), 'TurnStarted').length === 1 ? true : undefined));
    const refused = await b.request('POST', '/chat', { session_id: sessionId, message: 'and now this' });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('turn_running');
    expect(refused.body.detail).toContain(`:${a.pid}:`);
    const cont = await b.request('POST', `/sessions/${sessionId}/continue`);
    expect(cont.status).toBe(409);
    expect(cont.body.code).toBe('turn_running');
    const done = (await onA).at(-1)!;
    expect(done.data.status).toBe('completed');
    // The deltas of A's model reached a client of B, and add up to the text A recorded.
    const seenOnB = await watching;
    const tokens = seenOnB.filter((m) => m.type === 'token').map((m) => m.data.text as string);
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens.join('')).toBe('Thinking it over, slowly.');
    const all = await events(a, sessionId);
    // One user message (B's was not posted), one turn, and each turn ended before the next began.
    expect(of(all, 'UserMessagePosted')).toHaveLength(1);
    let open = 0;
    for (const e of all) {
      if (e.type === 'TurnStarted') open++;
      if (e.type === 'TurnEnded') open--;
      expect(open).toBeLessThanOrEqual(1);
    }
    expect(of(all, 'TurnStarted')).toHaveLength(1);
    // Once it ended, B takes the next turn.
    llm.script({ content: 'Now B answers.' });
    const onB = await chat(b, 'your turn, B', sessionId);
    expect(onB.at(-1)!.data.status).toBe('completed');
  });

  it('a console on B is told of a write on A, and its read on that message already shows it', async () => {
    const feed = await SseClient.connect(`${b.url}/changes`);
    try {
      await feed.waitFor('the first position', (m) => m.length >= 1);
      const sessionId = (await a.request('POST', '/sessions')).body.session_id as string;
      const goal = await a.request('POST', `/sessions/${sessionId}/commands`, { type: 'set_goal', goal: 'seen from the other server' });
      await feed.waitFor('A’s write, on B', (m) => m.some((x) => x.data.position >= goal.body.position));
      const read = await b.request('GET', `/sessions/${sessionId}`);
      expect(read.body.session.goal).toBe('seen from the other server');
    } finally {
      await feed.abort();
    }
  });

  it('SIGKILL of the server that took an approval before it started the command: another starts it exactly once, and the agent carries on', async () => {
    const marker = `/tmp/nomos-two-${randomUUID()}`;
    llm.script(call('run', { target: 'host:peer', command: `touch ${marker}` }), { content: 'That change needs your approval.' });
    const first = await chat(a, 'touch the marker file');
    const waiting = first.find((m) => m.type === 'tool_result')!.data.result;
    expect(waiting.status).toBe('approval_required');
    const sessionId = first[0]!.session_id;
    llm.script({ content: 'It ran after all.' });
    // What a server killed between recording the grant and starting the command leaves behind: the grant alone
    // (the window is a few milliseconds wide, too narrow to hit with a signal), and then that server is gone.
    const store = new SqlEventStore(testDb.db);
    await runSessionCommand({ store, readDb: testDb.db, clock: () => new Date(), newId: randomUUID }, sessionId, { type: 'approve', approval_id: waiting.approval_id }, { actor: { role: 'operator', id: 'ops' } });
    await a.stop('SIGKILL');
    const all = await continued(b, sessionId, 'It ran after all.');
    expect(of(all, 'ExecutionStarted', waiting.execution_id)).toHaveLength(1);
    expect(of(all, 'ExecutionSucceeded', waiting.execution_id)).toHaveLength(1);
    a = await start();
  });

  it('SIGKILL of the server running a command: recorded lost within seconds, and the agent carries on with that fact', async () => {
    llm.script(call('run', { target: 'host:peer', command: 'sleep 25' }), { content: 'It is still running; I will wait for it.' });
    const first = await chat(a, 'sleep a while on host:peer');
    const pending = first.find((m) => m.type === 'tool_result')!.data.result;
    expect(pending.status, JSON.stringify(pending)).toBe('pending');
    const sessionId = first[0]!.session_id;
    // B sees the command's live state through A's claim.
    const seen = await until('B to show the running command', async () => {
      const r = await b.request('GET', `/executions/${pending.execution_id}`);
      return r.body.status === 'running' && r.body.server?.includes(`:${a.pid}:`) ? r.body : undefined;
    });
    expect(seen.running_ms).toBeGreaterThan(0);
    llm.script({ content: 'The server running it died; its outcome is unknown, so I will check the host first.' });
    const killedAt = Date.now();
    await a.stop('SIGKILL');
    const all = await continued(b, sessionId, 'The server running it died; its outcome is unknown, so I will check the host first.');
    const failed = of(all, 'ExecutionFailed', pending.execution_id);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.data.error).toMatch(/^lost/);
    // Within the heartbeat's grace plus a sweep and a lease hand-over, not half an hour.
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    expect(JSON.stringify(llm.requests.at(-1)!.messages)).toMatch(/lost/);
    a = await start();
  });
});
