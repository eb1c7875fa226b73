// The session stream over real HTTP on a real database, read the way a chat client reads it: replay with ids,
// live events and token deltas, a cut connection resumed with Last-Event-ID losing and doubling nothing,
// until=done, one session only, refusals as problem+json before any event-stream byte, and a clean shutdown.
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEEP_ALIVE_MS, closeSseStreams, openSse } from '../../src/api/sse.ts';
import type { CommandContext } from '../../src/commands/context.ts';
import { runSessionCommand } from '../../src/commands/session.ts';
import type { SessionCommandInput } from '../../src/domain/session/decide.ts';
import { sessionStream } from '../../src/domain/session/stream.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { SseClient, type SseMessage } from '../support/sse-client.ts';

// The built-in agent loop acts for the session's owner (the operator who started it), as src/agent does.
const agent: CommandContext = { actor: { role: 'agent', id: 'nomos' }, actsForOwner: true };
const SHOWN = new Set(['UserMessagePosted', 'ToolCallRequested', 'ToolCallCompleted', 'ApprovalRequested', 'AssistantMessageRecorded', 'TurnFailed', 'TurnEnded']);

async function eventually(what: string, probe: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const types = (messages: readonly SseMessage[]) => messages.map((m) => m.data.type);

describe.each(databases)('session stream on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(async () => {
    await server?.close();
  });

  async function create(): Promise<string> {
    const res = await server.request('POST', '/sessions');
    expect(res.status).toBe(201);
    return res.body.session_id;
  }
  const run = (id: string, command: SessionCommandInput) => runSessionCommand(server.runtime.commandDeps, id, command, agent);
  const connect = (id: string, query = '', headers: Record<string, string> = {}) => SseClient.connect(`${server.url}/sessions/${id}/stream${query}`, headers);
  /** Positions of the session's events a client is shown, in order: the oracle, read straight off the store. */
  async function shownPositions(id: string, after = 0): Promise<number[]> {
    const { events } = await server.runtime.store.readStream(sessionStream(id));
    return events.filter((e) => SHOWN.has(e.type) && e.position > after).map((e) => e.position);
  }

  it('replays a whole turn from after=0: every shown event once, in order, with its position as id', async () => {
    const id = await create();
    await run(id, { type: 'post_user_message', text: 'restart nginx on strong' });
    await run(id, { type: 'start_turn', turn_id: 't1', trigger: 'user_message' });
    await run(id, { type: 'record_tool_call_requested', tool_call_id: 'tc1', name: 'get_entity', args: { slug: 'host:strong' } });
    await run(id, { type: 'record_tool_call_completed', tool_call_id: 'tc1', result: { slug: 'host:strong' } });
    const verdict = { risk_class: 'config_mutation' as const, reason: 'restarts a service', rule: 'systemctl-restart', inner_commands: [] };
    const requested = await run(id, {
      type: 'request_execution',
      execution_id: 'x1',
      target: 'host:strong',
      command: 'systemctl restart nginx',
      verdict,
      rules_version: '1',
      command_hash: 'h1',
      binding: 'b1',
      known_long: false,
      approval_ttl_ms: 600_000,
    });
    await run(id, { type: 'record_assistant_message', text: 'Restarting nginx needs your approval.' });
    await run(id, { type: 'fail_turn', turn_id: 't1', reason: 'iteration_limit', detail: 'stopped after 20 model calls' });
    await run(id, { type: 'end_turn', turn_id: 't1', status: 'failed', model_calls: 20 });

    const client = await connect(id, '?after=0&until=done');
    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toBe('text/event-stream');
    expect(client.headers['cache-control']).toBe('no-cache');
    expect(client.headers['x-accel-buffering']).toBe('no');
    await client.ended;

    expect(types(client.messages)).toEqual(['user_message', 'tool_use', 'tool_result', 'approval_required', 'text', 'error', 'done']);
    expect(client.messages[0]!.data.data).toMatchObject({ text: 'restart nginx on strong' });
    expect(client.messages.map((m) => Number(m.id))).toEqual(await shownPositions(id));
    expect(client.messages.every((m) => m.data.session_id === id)).toBe(true);
    const approval = requested.events.find((e) => e.type === 'ApprovalRequested');
    expect(client.messages[3]!.data.data).toEqual({
      approval_id: approval?.type === 'ApprovalRequested' && approval.data.approval_id,
      execution_id: 'x1',
      command: 'systemctl restart nginx',
      target: 'host:strong',
      risk_class: 'config_mutation',
      expires_at: expect.any(String),
    });
    expect(client.messages.at(-1)!.data).toEqual({ type: 'done', session_id: id, data: { turn_id: 't1', status: 'failed' } });
    expect(client.messages[5]!.data.data).toEqual({ reason: 'iteration_limit', detail: 'stopped after 20 model calls' });

    // ?after=N starts after that position.
    const from = Number(client.messages[3]!.id);
    const later = await connect(id, `?after=${from}&until=done`);
    await later.ended;
    expect(types(later.messages)).toEqual(['text', 'error', 'done']);
  });

  it('follows from now by default: live events as they are appended and token deltas without an id', async () => {
    const id = await create();
    await run(id, { type: 'start_turn', turn_id: 't1', trigger: 'user_message' });
    await run(id, { type: 'record_assistant_message', text: 'from before the client came' });

    const client = await connect(id);
    expect(client.status).toBe(200);
    const requested = await run(id, { type: 'record_tool_call_requested', tool_call_id: 'tc-live', name: 'get_entity', args: { slug: 'host:strong' } });
    await client.waitFor('the tool call', (m) => m.length >= 1);
    expect(client.messages[0]).toEqual({
      id: String(requested.position),
      data: { type: 'tool_use', session_id: id, data: { tool_call_id: 'tc-live', name: 'get_entity', args: { slug: 'host:strong' } } },
    });

    server.runtime.bus.publish(id, 'All ');
    server.runtime.bus.publish(id, 'good.');
    await client.waitFor('the deltas', (m) => m.length >= 3);
    expect(client.messages.slice(1)).toEqual([
      { id: null, data: { type: 'token', session_id: id, data: { text: 'All ' } } },
      { id: null, data: { type: 'token', session_id: id, data: { text: 'good.' } } },
    ]);

    const text = await run(id, { type: 'record_assistant_message', text: 'All good.' });
    const ended = await run(id, { type: 'end_turn', turn_id: 't1', status: 'completed', model_calls: 1 });
    await client.waitFor('done', (m) => m.some((x) => x.data.type === 'done'));
    expect(client.messages.slice(3).map((m) => [m.id, m.data.type])).toEqual([
      [String(text.position), 'text'],
      [String(ended.position), 'done'],
    ]);
    // Without until=done the stream stays open for the next turn.
    expect(client.done).toBe(false);
    expect(server.runtime.bus.hasListeners(id)).toBe(true);

    await client.abort();
    await eventually('the server to drop the token subscription', () => !server.runtime.bus.hasListeners(id));
  });

  it('resumes a cut connection from Last-Event-ID with every later message exactly once, while the turn goes on', async () => {
    const id = await create();
    await run(id, { type: 'start_turn', turn_id: 't1', trigger: 'user_message' });
    const pair = async (i: number) => {
      await run(id, { type: 'record_tool_call_requested', tool_call_id: `tc${i}`, name: 'get_entity', args: { slug: `host:h${i}` } });
      await run(id, { type: 'record_tool_call_completed', tool_call_id: `tc${i}`, result: { i } });
    };
    let cut!: () => void;
    const afterCut = new Promise<void>((resolve) => (cut = resolve));
    let appendedAfterCut = 0;
    let finished = false;
    // The agent keeps working whatever its clients do: part of the turn lands while the first one is
    // connected, part while it is cut off (the writer holds there until the cut), the rest after it is back.
    const writer = (async () => {
      for (let i = 0; i < 10; i++) await pair(i);
      await afterCut;
      for (let i = 10; i < 30; i++) {
        await pair(i);
        appendedAfterCut += 2;
        await new Promise((r) => setTimeout(r, 5));
      }
      await run(id, { type: 'record_assistant_message', text: 'checked 30 hosts' });
      await run(id, { type: 'end_turn', turn_id: 't1', status: 'completed', model_calls: 31 });
      finished = true;
    })();

    const first = await connect(id, '?after=0');
    await first.waitFor('a part of the turn', (m) => m.length >= 7);
    await first.abort();
    cut();
    await eventually('events appended during the cut', () => appendedAfterCut >= 6);
    expect(finished).toBe(false);
    const resumeFrom = first.lastEventId!;
    expect(resumeFrom).toBe(first.messages.at(-1)!.id);

    // A reconnecting EventSource repeats its first URL (here ?after=0): Last-Event-ID wins.
    const second = await connect(id, '?after=0&until=done', { 'last-event-id': resumeFrom });
    await writer;
    await second.ended;

    const received = [...first.messages, ...second.messages].map((m) => Number(m.id));
    expect(received).toEqual(await shownPositions(id));
    expect(received).toHaveLength(62);
    expect(types(second.messages).at(-1)).toBe('done');
    await eventually('no subscription left behind', () => !server.runtime.bus.hasListeners(id));
  });

  it('until=done ends the stream with the turn, and sends nothing after it', async () => {
    const id = await create();
    const client = await connect(id, '?until=done');
    await run(id, { type: 'start_turn', turn_id: 't1', trigger: 'user_message' });
    await run(id, { type: 'record_assistant_message', text: 'done here' });
    await run(id, { type: 'end_turn', turn_id: 't1', status: 'completed', model_calls: 1 });
    await run(id, { type: 'start_turn', turn_id: 't2', trigger: 'continue' });
    await run(id, { type: 'record_assistant_message', text: 'a later turn' });
    await client.ended;
    expect(types(client.messages)).toEqual(['text', 'done']);
    expect(client.messages[0]!.data.data.text).toBe('done here');
  });

  it('shows one session only: neither the events nor the deltas of another', async () => {
    const a = await create();
    const b = await create();
    const client = await connect(a, '?after=0');
    await run(b, { type: 'start_turn', turn_id: 'tb', trigger: 'user_message' });
    await run(b, { type: 'record_tool_call_requested', tool_call_id: 'b1', name: 'get_entity', args: { slug: 'host:b' } });
    await run(b, { type: 'record_assistant_message', text: 'for b' });
    server.runtime.bus.publish(b, 'b-token');
    await run(a, { type: 'start_turn', turn_id: 'ta', trigger: 'user_message' });
    const mine = await run(a, { type: 'record_assistant_message', text: 'for a' });
    await run(b, { type: 'end_turn', turn_id: 'tb', status: 'completed', model_calls: 1 });
    await client.waitFor('the message of a', (m) => m.some((x) => x.data.type === 'text'));
    // A moment for anything that would leak to arrive.
    await new Promise((r) => setTimeout(r, 200));
    expect(client.messages).toEqual([{ id: String(mine.position), data: { type: 'text', session_id: a, data: { message_id: expect.any(String), text: 'for a' } } }]);
    await client.abort();
  });

  it('refuses a bad resume point, a bad id and an unknown session with problem+json before streaming', async () => {
    const id = await create();
    const problem = async (path: string, status: number, code: string, headers: Record<string, string> = {}) => {
      const res = await server.request('GET', path, undefined, headers);
      expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body.code).toBe(code);
    };
    for (const after of ['-1', 'abc', '1.5', '1e3', '', '99999999999999999999']) await problem(`/sessions/${id}/stream?after=${after}`, 400, 'validation_failed');
    await problem(`/sessions/${id}/stream?until=forever`, 400, 'validation_failed');
    await problem(`/sessions/${id}/stream?follow=1`, 400, 'validation_failed');
    await problem(`/sessions/${id}/stream`, 400, 'invalid_last_event_id', { 'last-event-id': 'nope' });
    await problem('/sessions/not-a-uuid/stream', 400, 'validation_failed');
    await problem('/sessions/5b0c1a4e-8d2f-4c3b-9e1a-7f6d5c4b3a29/stream?after=0', 404, 'session_not_found');
  });

  it('ends open streams when the server closes, instead of holding the shutdown', async () => {
    const other = await startTestServer(database);
    const id = (await other.request('POST', '/sessions')).body.session_id;
    const client = await SseClient.connect(`${other.url}/sessions/${id}/stream`);
    expect(client.status).toBe(200);
    await other.close();
    await client.ended;
    expect(client.done).toBe(true);
  });
});

describe('openSse', () => {
  it('sends a keep-alive comment while idle (every 15 s by default) and stops when the client leaves', async () => {
    expect(KEEP_ALIVE_MS).toBe(15_000);
    const app = Fastify();
    const closed: Promise<void>[] = [];
    app.addHook('preClose', (done) => {
      closeSseStreams(app);
      done();
    });
    app.get('/sse', async (_request, reply) => {
      const sse = openSse(reply, { keepAliveMs: 20 });
      closed.push(sse.closed);
      sse.send({ id: 7, type: 'text', session_id: 's', data: { message_id: 'm', text: 'two\nlines' } });
      await sse.closed;
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const client = await SseClient.connect(`${url}/sse`);
      await client.waitFor('two keep-alives', () => client.comments.length >= 2);
      expect(client.comments.slice(0, 2)).toEqual(['keep-alive', 'keep-alive']);
      expect(client.messages).toEqual([{ id: '7', data: { type: 'text', session_id: 's', data: { message_id: 'm', text: 'two\nlines' } } }]);
      await client.abort();
      expect(closed).toHaveLength(1);
      await closed[0];
    } finally {
      await app.close();
    }
  });
});
