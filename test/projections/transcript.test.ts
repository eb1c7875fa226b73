// The transcript read model on real databases: messages in order with each turn's tool calls inside its
// assistant message (so the transcript and the session's tool_call_count agree), and the flat tool-call
// list with status and duration.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/ports/db.ts';
import { getSession, sessionsProjection } from '../../src/projections/sessions.ts';
import { getMessages, getToolCalls, transcriptProjection } from '../../src/projections/transcript.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { applyEvents, SessionFeed, turn } from './feed.ts';

describe.each(databases)('transcript projection on $name', (database) => {
  let t: TestDb;
  let db: Db;
  // Both projections see the same events, as the projector feeds them.
  const project = async (feed: SessionFeed) => {
    const events = feed.events.splice(0);
    await applyEvents(db, transcriptProjection, events);
    await applyEvents(db, sessionsProjection, events);
  };

  beforeAll(async () => {
    t = await database.open();
    db = t.db;
  });
  afterAll(async () => {
    await t.close();
  });

  function started(at: string): SessionFeed {
    const id = randomUUID();
    const feed = new SessionFeed(id, at);
    feed.add('SessionStarted', { session_id: id }, { at });
    return feed;
  }

  it('groups each turn’s tool calls under its assistant message, in order, and the counts agree with the session', async () => {
    const feed = started('2026-07-18T09:45:00.000Z');
    const u1 = randomUUID();
    feed.add('UserMessagePosted', { message_id: u1, text: 'Add an NFS export of ludo-lvm to ZimaOS' });
    const first = turn(feed, {
      tools: [{ name: 'get_entity', args: { slug: 'lxc:nfs-export' } }, { name: 'run', args: { target: 'host:strong', command: 'exportfs -v' } }],
      text: 'Checking the exports first.',
    });
    // The turn's final text replaces the progress note: the last AssistantMessageRecorded wins.
    feed.add('AssistantMessageRecorded', { message_id: first.messageId, text: 'strong exports /mnt/library to lxc:nfs-export only.' });
    const u2 = randomUUID();
    feed.add('UserMessagePosted', { message_id: u2, text: 'lets just keep ludo-library then' });
    const second = turn(feed, { tools: [{ name: 'run', args: { target: 'vm:zimaos' }, error: 'exit code 1' }, { name: 'complete_task' }] });
    await project(feed);

    const messages = await getMessages(db, feed.sessionId);
    expect(messages.map((m) => [m.id, m.role, m.content.text, m.content.tool_calls.map((c) => c.name)])).toEqual([
      [u1, 'user', 'Add an NFS export of ludo-lvm to ZimaOS', []],
      [first.messageId, 'assistant', 'strong exports /mnt/library to lxc:nfs-export only.', ['get_entity', 'run']],
      [u2, 'user', 'lets just keep ludo-library then', []],
      [second.messageId, 'assistant', null, ['run', 'complete_task']], // tool calls only: no text
    ]);
    expect(messages[1]!.content.tool_calls[1]).toEqual({
      id: first.toolCallIds[1],
      name: 'run',
      args: { target: 'host:strong', command: 'exportfs -v' },
      result: { ok: true },
      error: null,
      status: 'completed',
    });
    expect(messages[3]!.content.tool_calls[0]).toMatchObject({ status: 'failed', error: 'exit code 1' });
    // The first user message was posted one second after SessionStarted.
    expect(messages[0]!.created_at).toBe('2026-07-18T09:45:01.000Z');

    // [.messages[].content.tool_calls | length] | add == tool_call_count
    const inTranscript = messages.reduce((n, m) => n + m.content.tool_calls.length, 0);
    const session = await getSession(db, feed.sessionId);
    expect(inTranscript).toBe(4);
    expect(session?.tool_call_count).toBe(inTranscript);
    expect(session?.assistant_message_count).toBe(messages.filter((m) => m.role === 'assistant').length);
  });

  it('lists tool calls flat in seq order with status, result, error and duration', async () => {
    const feed = started('2026-07-18T11:28:00.000Z');
    const m = randomUUID();
    feed.add('UserMessagePosted', { message_id: randomUUID(), text: 'chown the export root' });
    feed.add('ToolCallRequested', { tool_call_id: 'tc-a', message_id: m, name: 'run', args: { target: 'host:strong', command: 'chown :10000 /mnt/media_local' } }, { at: '2026-07-18T11:29:00.000Z' });
    feed.add('ToolCallRequested', { tool_call_id: 'tc-b', message_id: m, name: 'get_execution_status', args: {} }, { at: '2026-07-18T11:29:10.000Z' });
    feed.add('ToolCallCompleted', { tool_call_id: 'tc-b', result: { status: 'running' }, error: null, result_original_bytes: null }, { at: '2026-07-18T11:29:10.250Z' });
    feed.add('ToolCallCompleted', { tool_call_id: 'tc-a', result: null, error: 'timed out after 30s', result_original_bytes: null }, { at: '2026-07-18T11:29:30.000Z' });
    feed.add('ToolCallRequested', { tool_call_id: 'tc-c', message_id: m, name: 'run', args: { target: 'host:strong', command: 'strace -f chown' } }, { at: '2026-07-18T11:30:00.000Z' });
    await project(feed);

    const calls = await getToolCalls(db, feed.sessionId);
    expect(calls.map((c) => [c.seq, c.id, c.status, c.duration_ms, c.completed_at])).toEqual([
      [1, 'tc-a', 'failed', 30_000, '2026-07-18T11:29:30.000Z'],
      [2, 'tc-b', 'completed', 250, '2026-07-18T11:29:10.250Z'],
      [3, 'tc-c', 'requested', null, null],
    ]);
    expect(calls[0]).toMatchObject({ name: 'run', message_id: m, result: null, error: 'timed out after 30s', requested_at: '2026-07-18T11:29:00.000Z' });
    expect(calls[1]).toMatchObject({ result: { status: 'running' }, error: null });
  });

  it('keeps a deleted session’s messages and tool calls for audits', async () => {
    const kept = started('2026-07-18T13:00:00.000Z');
    turn(kept, { user: 'hi', tools: [{ name: 'whoami' }], text: 'hello' });
    const deleted = started('2026-07-18T13:00:00.000Z');
    turn(deleted, { user: 'hi', tools: [{ name: 'whoami' }], text: 'hello' });
    deleted.add('SessionDeleted', { reason: null });
    await project(kept);
    await project(deleted);
    expect(await getMessages(db, deleted.sessionId)).toHaveLength(2);
    expect((await getToolCalls(db, deleted.sessionId)).map((c) => c.name)).toEqual(['whoami']);
    expect(await getMessages(db, kept.sessionId)).toHaveLength(2);
    expect(await getToolCalls(db, kept.sessionId)).toHaveLength(1);
  });
});
