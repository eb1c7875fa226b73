// Roles: operators may do anything, the agent may drive sessions but not delete them, auditors only read;
// without a valid token nothing is answered. With auth off, X-Nomos-Actor names the caller.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,agent:nomos:agent-secret-1-long-enough-for-32-chars,auditor:audit:audit-secret-1-long-enough-for-32-chars');
const as = (token: string) => ({ authorization: `Bearer ${token}` });

describe('token configuration', () => {
  it('parses role:name:token entries and refuses malformed ones', () => {
    expect(tokens.map((t) => [t.role, t.name])).toEqual([
      ['operator', 'alice'],
      ['agent', 'nomos'],
      ['auditor', 'audit'],
    ]);
    expect(() => parseTokens('root:x:long-enough-token')).toThrow(/role/);
    expect(() => parseTokens('operator:x:short')).toThrow(/entry 1 \(operator:x\) has a token of 5 characters; tokens need 32 or more/);
  });
});

describe.each(databases)('auth on $name', (database) => {
  let server: TestServer;
  let id: string;
  beforeAll(async () => {
    server = await startTestServer(database, { tokens });
    const created = await server.request('POST', '/sessions', undefined, as('agent-secret-1-long-enough-for-32-chars'));
    expect(created.status).toBe(201);
    id = created.body.session_id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers nothing without a valid token', async () => {
    const none = await server.request('GET', '/sessions');
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ code: 'unauthenticated', title: 'Unauthorized' });
    expect((await server.request('GET', '/sessions', undefined, as('wrong-token-123'))).status).toBe(401);
  });

  it('lets the agent drive a session and records who acted', async () => {
    const res = await server.request('POST', `/sessions/${id}/commands`, { type: 'set_goal', goal: 'check the backups' }, as('agent-secret-1-long-enough-for-32-chars'));
    expect(res.status).toBe(200);
    const events = await server.request('GET', `/sessions/${id}/events`, undefined, as('audit-secret-1-long-enough-for-32-chars'));
    expect(events.body.events.at(-1).metadata.actor).toEqual({ role: 'agent', id: 'nomos' });
  });

  it('keeps auditors read-only and appends nothing for them', async () => {
    const before = (await server.runtime.store.head()).position;
    const write = await server.request('POST', `/sessions/${id}/commands`, { type: 'post_user_message', text: 'hi' }, as('audit-secret-1-long-enough-for-32-chars'));
    expect(write.status).toBe(403);
    expect(write.body.detail).toMatch(/auditor/);
    expect(write.body.title).toBe('Forbidden');
    expect((await server.request('POST', '/sessions', undefined, as('audit-secret-1-long-enough-for-32-chars'))).status).toBe(403);
    expect((await server.runtime.store.head()).position).toBe(before);
    expect((await server.request('GET', `/sessions/${id}`, undefined, as('audit-secret-1-long-enough-for-32-chars'))).status).toBe(200);
  });

  it('lets only operators delete a session', async () => {
    const byAgent = await server.request('DELETE', `/sessions/${id}`, undefined, as('agent-secret-1-long-enough-for-32-chars'));
    expect(byAgent.status).toBe(403);
    expect(byAgent.body.detail).toMatch(/agent may not delete/);
    expect((await server.request('DELETE', `/sessions/${id}`, undefined, as('op-secret-1-long-enough-for-32-chars'))).status).toBe(200);
  });
});

describe.each(databases)('auth off on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('takes the caller from X-Nomos-Actor and still keeps auditors read-only', async () => {
    const created = await server.request('POST', '/sessions', undefined, { 'x-nomos-actor': 'agent:bot-7' });
    expect(created.status).toBe(201);
    const events = await server.request('GET', `/sessions/${created.body.session_id}/events`);
    expect(events.body.events[0].metadata.actor).toEqual({ role: 'agent', id: 'bot-7' });
    expect((await server.request('POST', '/sessions', undefined, { 'x-nomos-actor': 'auditor' })).status).toBe(403);
  });
});
