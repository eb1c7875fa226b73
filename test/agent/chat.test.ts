// The agent end to end: the real openai SDK against a scripted OpenAI-compatible server, real HTTP, a real
// database and a real SSH server. goal → plan → run → complete; empty answers retried; the retry cap ending a
// session partial with blocker tool_error; a cut connection resumed with Last-Event-ID; cancel; continuing
// by itself once an approved execution ends.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { type AgentWorld, startAgentWorld } from '../support/agent-world.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { type SshPeer, sshOf } from '../support/ssh-peer.ts';
import { type SseMessage, readSse } from '../support/sse-reader.ts';

const call = (name: string, args: unknown) => ({ toolCalls: [{ name, arguments: args }] });

describe.each(databases)('the agent on $name', (database) => {
  let peer: SshPeer;
  let llm: FakeOpenAi;
  let server: TestServer;
  let world: AgentWorld;

  beforeAll(async () => {
    world = await startAgentWorld(database, {
      execution: { shortWaitMs: 3_000, hardLimitMs: 60_000, approvalTtlMs: 60_000, hungAfterMs: 60_000 },
    });
    ({ peer, llm, server } = world);
    const reg = await server.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh: sshOf(peer) });
    expect(reg.status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  const chat = async (message: string, sessionId?: string) => {
    const res = await fetch(`${server.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message, ...(sessionId && { session_id: sessionId }) }) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    return readSse(res, (m) => m.type === 'done');
  };
  const stored = (messages: SseMessage[]) => messages.filter((m) => m.type !== 'token');

  it('drives a session: goal, plan, a run on the SSH server, completion — all visible in the read model', async () => {
    const hostname = readFileSync('/etc/hostname', 'utf8').trim();
    llm.script(
      call('set_goal', { goal: 'Find the hostname of host:peer' }),
      call('propose_plan', { steps: [{ title: 'read /etc/hostname', command: 'cat /etc/hostname', target: 'host:peer' }] }),
      call('run', { target: 'host:peer', command: 'cat /etc/hostname' }),
      call('complete_task', { outcome: 'success', summary: `the hostname is ${hostname}` }),
      { content: `The hostname of host:peer is ${hostname}.` },
    );
    const messages = await chat('what is the hostname of host:peer?');
    const types = stored(messages).map((m) => m.type);
    expect(types).toEqual(['tool_use', 'tool_result', 'tool_use', 'tool_result', 'tool_use', 'tool_result', 'tool_use', 'tool_result', 'text', 'done']);
    expect(messages.some((m) => m.type === 'token' && m.id === null)).toBe(true);
    const ids = stored(messages).map((m) => m.id!);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const runResult = stored(messages)[5]!;
    expect(runResult.data.result).toMatchObject({ status: 'succeeded', stdout: `${hostname}\n` });
    const sessionId = messages[0]!.session_id;
    const done = messages.at(-1)!;
    expect(done.data.status).toBe('completed');

    const view = await server.request('GET', `/sessions/${sessionId}?min_position=${done.id}`);
    expect(view.body.session).toMatchObject({ title: 'Find the hostname of host:peer', status: 'done', outcome: 'success', tool_call_count: 4, executions_count: 1, turn_count: 1 });
    expect(view.body.messages.map((m: any) => [m.role, m.content.tool_calls.length])).toEqual([['user', 0], ['assistant', 4]]);
    // The model's context for its last call held every tool call and what it returned.
    const last = llm.requests.at(-1)!;
    expect(last.messages.filter((m: any) => m.role === 'tool')).toHaveLength(4);
    expect(JSON.stringify(last.messages)).toContain(hostname);
    expect(last.tools!.map((t: any) => t.function.name)).toEqual(expect.arrayContaining(['run', 'upsert_knowledge', 'http_get', 'inspect_path']));
  });

  it('retries an empty answer and then shows the real one', async () => {
    const before = llm.requests.length;
    llm.script({ content: '' }, { content: '   ' }, { content: 'Hello, operator.' });
    const messages = await chat('hi');
    expect(stored(messages).map((m) => [m.type, m.data.text ?? m.data.status])).toEqual([['text', 'Hello, operator.'], ['done', 'completed']]);
    expect(llm.requests.length - before).toBe(3);
  });

  it('retries a provider error once with backoff, and fails the turn when it persists', async () => {
    llm.script({ status: 502, error: 'bad gateway' }, { content: 'Back again.' });
    expect(stored(await chat('are you there?')).map((m) => m.type)).toEqual(['text', 'done']);
    llm.script({ status: 500, error: 'down' }, { status: 500, error: 'still down' });
    const failed = stored(await chat('and now?'));
    expect(failed.map((m) => m.type)).toEqual(['error', 'done']);
    expect(failed[0]!.data.reason).toBe('provider_error');
  });

  it('records a failed turn when every answer is empty or a canned refusal', async () => {
    llm.script({ content: '' }, { content: '抱歉，我无法回答这个问题' }, { content: '' }, { content: '' });
    const messages = stored(await chat('hello?'));
    expect(messages.map((m) => m.type)).toEqual(['error', 'done']);
    expect(messages[0]!.data.reason).toBe('model_empty_response');
    expect(messages[1]!.data.status).toBe('failed');
  });

  it('stops a model that keeps re-running a failing command: the retry cap ends the session partial, blocker tool_error', async () => {
    llm.respond((request) => {
      const results = request.messages.filter((m: any) => m.role === 'tool').map((m: any) => String(m.content));
      if (results.some((r) => r.includes('retry_cap'))) {
        return results.at(-1)!.includes('retry_cap') && !results.some((r) => r.includes('"outcome"'))
          ? call('complete_task', { outcome: 'partial', summary: 'the command keeps failing; stopped by the retry cap' })
          : { content: 'I stopped: the same command failed twice. Someone needs to look at /nonexistent.' };
      }
      return call('run', { target: 'host:peer', command: 'cat /nonexistent/file' });
    });
    const messages = stored(await chat('read /nonexistent/file on host:peer'));
    const runs = messages.filter((m) => m.type === 'tool_result' && m.data.result?.execution_id);
    // Two attempts that did not succeed, then the third is refused.
    expect(runs.map((m) => m.data.result.status)).toEqual(['failed', 'failed', 'refused']);
    expect(runs[2]!.data.result).toMatchObject({ reason: 'retry_cap' });
    const done = messages.at(-1)!;
    const view = await server.request('GET', `/sessions/${done.session_id}?min_position=${done.id}`);
    expect(view.body.session).toMatchObject({ outcome: 'partial', blocker: 'tool_error', failed_executions: 2 });
    expect(view.body.session.blocker_evidence).toEqual({ source: 'event', detail: '1 execution refused by the retry cap, 2 executions failed' });
  });

  it('resumes a cut connection with Last-Event-ID: every message exactly once', async () => {
    llm.script(
      { ...call('whoami', {}), delayMs: 150 },
      { ...call('list_entities', {}), delayMs: 150 },
      { ...call('get_health_summary', {}), delayMs: 150 },
      { content: 'All good.', delayMs: 150 },
    );
    const res = await fetch(`${server.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'status?' }) });
    // The client drops after its second stored message.
    const first = stored(await readSse(res, (_m, all) => stored(all).length === 2));
    const sessionId = first[0]!.session_id;
    const lastId = first.at(-1)!.id!;
    const resumed = await fetch(`${server.url}/sessions/${sessionId}/stream?until=done`, { headers: { 'last-event-id': String(lastId) } });
    const rest = stored(await readSse(resumed, (m) => m.type === 'done'));
    const all = [...first, ...rest];
    const ids = all.map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
    // The whole turn, replayed from the start, is exactly what the two connections saw together.
    const userMessagePosition = Math.min(...ids.map(Number)) - 1;
    const full = stored(await readSse(await fetch(`${server.url}/sessions/${sessionId}/stream?until=done&after=${userMessagePosition - 1}`), (m) => m.type === 'done'));
    expect(all.map((m) => m.id)).toEqual(full.map((m) => m.id));
    expect(all.map((m) => m.type)).toEqual(['tool_use', 'tool_result', 'tool_use', 'tool_result', 'tool_use', 'tool_result', 'text', 'done']);
  });

  it('cancels a running turn between tool calls, and records it', async () => {
    llm.script(call('run', { target: 'host:peer', command: 'sleep 2; echo slow' }), call('whoami', {}), { content: 'never said' });
    const res = await fetch(`${server.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'do the slow thing' }) });
    const messages: SseMessage[] = [];
    const reading = readSse(res, (m, all) => {
      messages.splice(0, messages.length, ...all);
      return m.type === 'done';
    });
    const started = await (async () => {
      for (let i = 0; i < 100 && messages.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      return messages[0];
    })();
    expect(started?.type).toBe('tool_use');
    const cancel = await server.request('POST', `/sessions/${started!.session_id}/cancel`);
    expect(cancel.status).toBe(200);
    const all = stored(await reading);
    expect(all.map((m) => m.type)).toEqual(['tool_use', 'tool_result', 'error', 'done']);
    expect(all.at(-1)!.data.status).toBe('cancelled');
    const events = (await server.request('GET', `/sessions/${started!.session_id}/events`)).body.events.map((e: any) => e.type);
    expect(events).toContain('TurnCancelRequested');
  });

  it('continues by itself once an execution it waited on is approved and finishes', async () => {
    llm.script(call('run', { target: 'host:peer', command: 'touch /tmp/nomos-agent-continued' }), { content: 'That change needs your approval.' });
    const asked = llm.requests.length;
    const first = stored(await chat('touch the marker file'));
    // Once seen in CI (not reproduced since): this chat got no tool_result. Say what the scripted model was asked
    // meanwhile, so another turn taking this test's replies shows up as such.
    const lately = () => llm.requests.slice(asked).map((r) => JSON.stringify(r.messages.filter((m: any) => m.role === 'user').at(-1)?.content ?? null).slice(0, 120));
    expect(first.map((m) => m.type), `the model was asked for: ${lately().join(' | ')}; messages: ${JSON.stringify(first).slice(0, 800)}`).toEqual(['tool_use', 'approval_required', 'tool_result', 'text', 'done']);
    const approval = first.find((m) => m.type === 'tool_result')!.data.result;
    expect(approval.status).toBe('approval_required');
    const sessionId = first[0]!.session_id;
    llm.script({ content: 'The marker file is in place.' });
    const follow = fetch(`${server.url}/sessions/${sessionId}/stream?until=done`);
    const approved = await server.request('POST', `/approvals/${approval.approval_id}/approve`);
    expect(approved.body.execution.status).toBe('succeeded');
    const next = stored(await readSse(await follow, (m) => m.type === 'done'));
    expect(next.map((m) => [m.type, m.data.text ?? m.data.status])).toEqual([['text', 'The marker file is in place.'], ['done', 'completed']]);
    // The model was told the execution had ended.
    expect(JSON.stringify(llm.requests.at(-1)!.messages)).toContain('An execution you were waiting on has ended');
  });

  it('carries on by itself when the operator denies what it waited for, told the reason', async () => {
    llm.script(call('run', { target: 'host:peer', command: 'touch /tmp/nomos-denied' }), { content: 'That needs your approval.' });
    const first = stored(await chat('touch it'));
    const approval = first.find((m) => m.type === 'tool_result')!.data.result;
    expect(approval.status).toBe('approval_required');
    const sessionId = first[0]!.session_id;
    llm.script({ content: 'Understood: I will not touch it during backups.' });
    const follow = fetch(`${server.url}/sessions/${sessionId}/stream?until=done`);
    expect((await server.request('POST', `/approvals/${approval.approval_id}/deny`, { reason: 'not during backups' })).status).toBe(200);
    const next = stored(await readSse(await follow, (m) => m.type === 'done'));
    expect(next.map((m) => [m.type, m.data.text ?? m.data.status])).toEqual([['text', 'Understood: I will not touch it during backups.'], ['done', 'completed']]);
    expect(JSON.stringify(llm.requests.at(-1)!.messages)).toContain('denied approval');
    expect(JSON.stringify(llm.requests.at(-1)!.messages)).toContain('not during backups');
  });
});

describe.each(databases)('the agent’s knowledge on $name', (database) => {
  let peer: SshPeer;
  let llm: FakeOpenAi;
  let server: TestServer;
  let world: AgentWorld;
  beforeAll(async () => {
    world = await startAgentWorld(database);
    ({ peer, llm, server } = world);
    await server.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh: sshOf(peer) });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  const chat = async (message: string, sessionId?: string) => {
    const res = await fetch(`${server.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message, ...(sessionId && { session_id: sessionId }) }) });
    // Posted the moment the previous turn's done was read: never refused as turn_running.
    expect(res.status, res.status === 200 ? '' : await res.text()).toBe(200);
    return readSse(res, (m) => m.type === 'done');
  };

  it('reminds a session that changed something to write back, then writes and finds a runbook', async () => {
    const first = await chat('open an assent window please');
    const sessionId = first[0]!.session_id;
    expect((await server.request('POST', `/sessions/${sessionId}/assent`, { minutes: 10 })).status).toBe(200);
    llm.script(call('run', { target: 'host:peer', command: 'touch /tmp/nomos-knowledge-test' }), call('complete_task', { outcome: 'success', summary: 'touched' }), { content: 'Done.' });
    const changed = (await chat('touch it', sessionId)).filter((m) => m.type === 'tool_result');
    expect(changed[0]!.data.result.status).toBe('succeeded');
    expect(changed[1]!.data.result.reminder).toMatch(/upsert_knowledge/);

    llm.script(
      call('upsert_knowledge', { kind: 'runbook', title: 'Unexport before chown on NFS exports', body: 'knfsd holds the directory: exportfs -u, chown, exportfs -a.', about: ['host:peer'], tags: ['nfs'] }),
      call('search_knowledge', { query: 'chown nfs export' }),
      call('get_entity_knowledge', { slug: 'host:peer' }),
      { content: 'Written down.' },
    );
    const results = (await chat('write down what we learned', sessionId)).filter((m) => m.type === 'tool_result');
    expect(results[0]!.data.error).toBeNull();
    // The search runs on the read model: the item may need a moment to be projected, so the test reads it back too.
    let found = '';
    for (let i = 0; i < 100 && !found.includes('Unexport before chown'); i++) {
      found = JSON.stringify((await server.request('GET', '/knowledge?q=chown%20nfs')).body);
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(found).toContain('Unexport before chown on NFS exports');
    expect(JSON.stringify(results[2]!.data.result)).toContain('runbook');
  });
});

describe.each(databases)('no model provider on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers POST /chat with 503 and what to set, and the rest of the API works', async () => {
    const res = await server.request('POST', '/chat', { message: 'hello' });
    expect(res.status).toBe(503);
    expect(res.body.detail).toMatch(/OPENAI_BASE_URL/);
    expect((await server.request('POST', '/sessions')).status).toBe(201);
  });
});
