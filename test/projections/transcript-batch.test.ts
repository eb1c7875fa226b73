// The transcript folds a batch in memory and reads only what it cannot know (each session's highest seq, which
// requested calls are stored), so the paths where a batch boundary matters are checked here on purpose: each
// session's events applied one per transaction, all in one batch, and cut in two batches at every point must
// give the same rows, and those rows are spelled out.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/ports/db.ts';
import type { StoredEvent } from '../../src/ports/event-store.ts';
import { getMessages, getToolCalls, transcriptProjection } from '../../src/projections/transcript.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { SessionFeed } from './feed.ts';

const ok = { ok: true };

describe.each(databases)('transcript batches on $name', (database) => {
  let t: TestDb;
  let db: Db;

  beforeAll(async () => {
    t = await database.open();
    db = t.db;
  });
  afterAll(async () => {
    await t.close();
  });

  async function rowsAfter(batches: readonly (readonly StoredEvent[])[]): Promise<unknown[]> {
    await db.query('DELETE FROM tool_calls');
    await db.query('DELETE FROM messages');
    for (const batch of batches) {
      const handled = batch.filter((e) => transcriptProjection.handles.has(e.type));
      if (handled.length > 0) await db.transaction((tx) => transcriptProjection.applyBatch(tx, handled));
    }
    const { rows } = await db.query(
      `SELECT to_jsonb(t) AS row FROM (SELECT 'call' AS kind, to_jsonb(c) AS r FROM tool_calls c UNION ALL SELECT 'message', to_jsonb(m) FROM messages m) t
       ORDER BY to_jsonb(t)::text`,
    );
    return rows;
  }

  /** Applies the events every way; leaves them applied one per transaction for the caller to inspect. */
  async function projectEveryWay(events: readonly StoredEvent[]): Promise<void> {
    const whole = await rowsAfter([events]);
    for (let cut = 1; cut < events.length; cut++) expect(await rowsAfter([events.slice(0, cut), events.slice(cut)]), `cut at ${cut}`).toEqual(whole);
    expect(await rowsAfter(events.map((e) => [e])), 'one per transaction').toEqual(whole);
  }

  function started(): SessionFeed {
    const id = randomUUID();
    const feed = new SessionFeed(id, '2026-08-01T10:00:00.000Z');
    feed.add('SessionStarted', { session_id: id });
    return feed;
  }

  it('numbers calls after the stored ones, skips a repeated request and completes only calls that exist', async () => {
    const feed = started();
    feed.add('ToolCallRequested', { tool_call_id: 'a', message_id: 'm1', name: 'run', args: { n: 1 } });
    feed.add('ToolCallCompleted', { tool_call_id: 'b', result: ok, error: null, result_original_bytes: null }); // before its request: nothing to complete
    feed.add('ToolCallRequested', { tool_call_id: 'b', message_id: 'm1', name: 'get', args: {} });
    feed.add('ToolCallRequested', { tool_call_id: 'a', message_id: 'm2', name: 'again', args: { n: 2 } }); // repeated: the call stays, m2 is created
    feed.add('ToolCallCompleted', { tool_call_id: 'a', result: { first: true }, error: 'boom', result_original_bytes: 9000 });
    feed.add('ToolCallCompleted', { tool_call_id: 'a', result: null, error: null, result_original_bytes: null }); // the last completion wins
    feed.add('ToolCallCompleted', { tool_call_id: 'nowhere', result: ok, error: null, result_original_bytes: null });
    feed.add('ToolCallRequested', { tool_call_id: 'c', message_id: 'm2', name: 'run', args: {} });
    await projectEveryWay(feed.events);

    const calls = await getToolCalls(db, feed.sessionId);
    expect(calls.map((c) => [c.seq, c.id, c.message_id, c.name, c.args, c.status, c.result, c.error])).toEqual([
      [1, 'a', 'm1', 'run', { n: 1 }, 'completed', null, null],
      [2, 'b', 'm1', 'get', {}, 'requested', null, null],
      [3, 'c', 'm2', 'run', {}, 'requested', null, null],
    ]);
    expect(calls[0]!.completed_at).toBe('2026-08-01T10:00:06.000Z');
    const messages = await getMessages(db, feed.sessionId);
    expect(messages.map((m) => [m.id, m.role, m.content.text, m.created_at])).toEqual([
      ['m1', 'assistant', null, '2026-08-01T10:00:01.000Z'],
      ['m2', 'assistant', null, '2026-08-01T10:00:04.000Z'],
    ]);
  });

  it('gives a message created by a tool call or by the user the text recorded later, keeping its role, time and place', async () => {
    const feed = started();
    feed.add('UserMessagePosted', { message_id: 'u', text: 'hello' });
    feed.add('ToolCallRequested', { tool_call_id: 'a', message_id: 'm', name: 'run', args: {} });
    feed.add('AssistantMessageRecorded', { message_id: 'm', text: 'working on it' });
    feed.add('UserMessagePosted', { message_id: 'm', text: 'ignored: the id is taken' });
    feed.add('AssistantMessageRecorded', { message_id: 'm', text: 'done' });
    feed.add('AssistantMessageRecorded', { message_id: 'u', text: 'overwritten' });
    feed.add('AssistantMessageRecorded', { message_id: 'late', text: 'new' });
    feed.add('ToolCallRequested', { tool_call_id: 'b', message_id: 'late', name: 'run', args: {} });
    await projectEveryWay(feed.events);

    const messages = await getMessages(db, feed.sessionId);
    expect(messages.map((m) => [m.id, m.role, m.content.text, m.created_at, m.content.tool_calls.map((c) => c.id)])).toEqual([
      ['u', 'user', 'overwritten', '2026-08-01T10:00:01.000Z', []],
      ['m', 'assistant', 'done', '2026-08-01T10:00:02.000Z', ['a']],
      ['late', 'assistant', 'new', '2026-08-01T10:00:07.000Z', ['b']],
    ]);
  });

  it('keeps a deleted session’s rows, and applies what follows the delete to them as to any', async () => {
    const feed = started();
    const other = started();
    other.add('ToolCallRequested', { tool_call_id: 'a', message_id: 'm', name: 'kept', args: {} });
    feed.add('UserMessagePosted', { message_id: 'u', text: 'before' });
    feed.add('ToolCallRequested', { tool_call_id: 'a', message_id: 'm', name: 'first', args: {} });
    feed.add('ToolCallRequested', { tool_call_id: 'b', message_id: 'm', name: 'second', args: {} });
    feed.add('SessionDeleted', { reason: null });
    feed.add('ToolCallCompleted', { tool_call_id: 'b', result: ok, error: null, result_original_bytes: null });
    feed.add('ToolCallRequested', { tool_call_id: 'b', message_id: 'm', name: 'requested again', args: {} }); // the id is taken: left alone
    feed.add('UserMessagePosted', { message_id: 'u', text: 'posted again' }); // the message is there: stays as it is
    await projectEveryWay([...other.events, ...feed.events].sort((a, b) => a.position - b.position));

    const calls = await getToolCalls(db, feed.sessionId);
    expect(calls.map((c) => [c.seq, c.id, c.name, c.status, c.result])).toEqual([
      [1, 'a', 'first', 'requested', null],
      [2, 'b', 'second', 'completed', ok],
    ]);
    const messages = await getMessages(db, feed.sessionId);
    expect(messages.map((m) => [m.id, m.content.text])).toEqual([
      ['u', 'before'],
      ['m', null],
    ]);
    expect((await getToolCalls(db, other.sessionId)).map((c) => c.name)).toEqual(['kept']);
  });
});
