// The stream state a process keeps between commands is a hint, never the truth: two stores on one database
// stand in for two servers, and a command decided on a state the other server has moved on from is decided
// again on the stream as it stands, whether the kept state would have appended, refused or done nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlEventStore } from '../../src/adapters/eventstore/sql.ts';
import type { CommandContext, CommandDeps } from '../../src/commands/context.ts';
import { runSessionCommand } from '../../src/commands/session.ts';
import { RuleViolation } from '../../src/domain/messages.ts';
import { sessionStream } from '../../src/domain/session/stream.ts';
import { databases } from '../support/databases.ts';
import type { TestDb } from '../support/databases.ts';

const ctx: CommandContext = { actor: { role: 'operator', id: 'test' } };

describe.each(databases)('kept stream state on $name', (database) => {
  let testDb: TestDb;
  let a: CommandDeps;
  let b: CommandDeps;
  beforeAll(async () => {
    testDb = await database.open();
    const deps = (store: SqlEventStore): CommandDeps => ({ store, readDb: testDb.db, clock: () => new Date(), newId: randomUUID });
    a = deps(new SqlEventStore(testDb.db));
    b = deps(new SqlEventStore(testDb.db));
  });
  afterAll(async () => {
    await a?.store.close();
    await b?.store.close();
    await testDb?.close();
  });

  const started = async (): Promise<string> => {
    const id = randomUUID();
    await runSessionCommand(a, id, { type: 'start_session', session_id: id }, ctx);
    return id;
  };
  const types = async (id: string) => (await a.store.readStream(sessionStream(id))).events.map((e) => e.type);

  it('appends after the other server’s write, not over it', async () => {
    const id = await started();
    await runSessionCommand(a, id, { type: 'post_user_message', text: 'one' }, ctx);
    await runSessionCommand(b, id, { type: 'post_user_message', text: 'two' }, ctx);
    const handled = await runSessionCommand(a, id, { type: 'post_user_message', text: 'three' }, ctx);
    expect(handled.version).toBe(3);
    expect(await types(id)).toEqual(['SessionStarted', 'UserMessagePosted', 'UserMessagePosted', 'UserMessagePosted']);
  });

  it('does not refuse what the stream as it stands allows: a session the other server reopened can be completed', async () => {
    const id = await started();
    await runSessionCommand(a, id, { type: 'complete_task', outcome: 'success', summary: 'done' }, ctx);
    // Server A's kept state says closed; server B reopens the session with new work.
    await runSessionCommand(b, id, { type: 'set_goal', goal: 'one more thing' }, ctx);
    const handled = await runSessionCommand(a, id, { type: 'complete_task', outcome: 'partial', summary: 'the other thing' }, ctx);
    expect(handled.events.map((e) => e.type)).toContain('TaskCompleted');
  });

  it('still refuses what the stream as it stands refuses', async () => {
    const id = await started();
    await runSessionCommand(a, id, { type: 'post_user_message', text: 'hello' }, ctx);
    // Server B closes it; A's kept state says active.
    await runSessionCommand(b, id, { type: 'complete_task', outcome: 'success', summary: 'closed on B' }, ctx);
    await expect(runSessionCommand(a, id, { type: 'complete_task', outcome: 'failed', summary: 'again' }, ctx)).rejects.toBeInstanceOf(RuleViolation);
    expect((await types(id)).filter((t) => t === 'TaskCompleted')).toHaveLength(1);
  });
});
