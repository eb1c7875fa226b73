// Bad input of every kind gets a 4xx that names the problem, appends nothing, and never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

describe.each(databases)('bad input on $name', (database) => {
  let server: TestServer;
  let id: string;
  beforeAll(async () => {
    server = await startTestServer(database, { bodyLimit: 64 * 1024 });
    id = (await server.request('POST', '/sessions')).body.session_id;
    await server.request('POST', `/sessions/${id}/commands`, { type: 'propose_plan', steps: [{ title: 'one' }, { title: 'two' }] });
  });
  afterAll(async () => {
    await server?.close();
  });

  const head = async () => (await server.runtime.store.head()).position;

  const cases: Array<[string, () => [string, string, unknown?, Record<string, string>?], number, RegExp]> = [
    ['malformed JSON', () => ['POST', `/sessions/${id}/commands`, '{"type": "post_user_message", "text": '], 400, /json|unexpected|body/i],
    ['unknown command type', () => ['POST', `/sessions/${id}/commands`, { type: 'drop_tables' }], 400, /body\.type.*post_user_message/],
    ['unknown field', () => ['POST', `/sessions/${id}/commands`, { type: 'post_user_message', text: 'x', colour: 'red' }], 400, /colour/],
    ['missing field', () => ['POST', `/sessions/${id}/commands`, { type: 'set_goal' }], 400, /body\.goal/],
    ['wrong field type', () => ['POST', `/sessions/${id}/commands`, { type: 'update_plan_step', seq: 'one', status: 'running' }], 400, /body\.seq/],
    ['bad enum value', () => ['POST', `/sessions/${id}/commands`, { type: 'complete_task', outcome: 'meh', summary: '' }], 400, /body\.outcome/],
    ['body that is not an object', () => ['POST', `/sessions/${id}/commands`, '"just a string"'], 400, /body/],
    ['empty JSON body', () => ['POST', `/sessions/${id}/commands`, ''], 400, /body/i],
    ['oversized body', () => ['POST', `/sessions/${id}/commands`, { type: 'post_user_message', text: 'x'.repeat(100_000) }], 413, /large|limit/i],
    ['unsupported media type', () => ['POST', `/sessions/${id}/commands`, 'text=hi', { 'content-type': 'application/x-www-form-urlencoded' }], 415, /media type|content-type/i],
    ['session id that is not a UUID', () => ['POST', '/sessions/not-a-uuid/commands', { type: 'post_user_message', text: 'x' }], 400, /UUID/],
    ['unknown session', () => ['POST', '/sessions/00000000-0000-4000-8000-000000000000/commands', { type: 'post_user_message', text: 'x' }], 404, /session/],
    ['a domain rule refused (step order)', () => ['POST', `/sessions/${id}/commands`, { type: 'update_plan_step', seq: 2, status: 'running' }], 409, /step 1/],
    ['a domain rule refused (unknown tool call)', () => ['POST', `/sessions/${id}/commands`, { type: 'record_tool_call_completed', tool_call_id: 'nope', result: 1 }], 409, /nope|tool call/],
    ['limit out of range', () => ['GET', '/sessions?limit=0'], 400, /limit/],
    ['limit too large', () => ['GET', '/sessions?limit=1001'], 400, /limit/],
    ['unknown field asked for', () => ['GET', '/sessions?fields=id,colour'], 400, /unknown field "colour"/],
    ['bad since', () => ['GET', '/sessions?since=yesterday'], 400, /since/],
    ['bad outcome filter', () => ['GET', '/sessions?outcome=great'], 400, /outcome/],
    ['unknown query parameter', () => ['GET', '/sessions?colour=red'], 400, /colour/],
    ['bad cursor', () => ['GET', '/sessions?cursor=%%%garbage'], 400, /cursor/],
    ['bad min_position', () => ['GET', `/sessions/${id}?min_position=-4`], 400, /min_position/],
    ['bad id on read', () => ['GET', '/sessions/123'], 400, /UUID/],
    ['unknown session on read', () => ['GET', '/sessions/00000000-0000-4000-8000-000000000000'], 404, /session/],
    ['unknown route', () => ['GET', '/nothing-here'], 404, /no route/],
    ['bad actor header', () => ['POST', `/sessions/${id}/commands`, { type: 'post_user_message', text: 'x' }, { 'x-nomos-actor': 'root' }], 400, /X-Nomos-Actor/],
    ['NUL character in a filter', () => ['GET', '/sessions?entity_id=%00'], 400, /entity_id.*NUL/],
    ['args nested too deeply', () => ['POST', `/sessions/${id}/commands`, `{"type":"record_tool_call_requested","tool_call_id":"deep","name":"n","args":{"a":${'['.repeat(5000)}${']'.repeat(5000)}}}`], 400, /body\.args.*deeper/],
    ['result nested too deeply', () => ['POST', `/sessions/${id}/commands`, `{"type":"record_tool_call_completed","tool_call_id":"x","result":${'['.repeat(100)}${']'.repeat(100)}}`], 400, /body\.result.*deeper/],
    ['unknown query parameter on events', () => ['GET', `/sessions/${id}/events?x=1`], 400, /x/],
    ['unknown field on create', () => ['POST', '/sessions', { title: 'x' }], 400, /title/],
  ];

  it.each(cases)('%s → %i, names the problem, appends nothing', async (_name, make, status, message) => {
    const before = await head();
    const [method, path, body, headers] = make();
    const res = await server.request(method, path, body, headers);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(typeof res.body.code).toBe('string');
    expect(res.body.detail).toMatch(message);
    expect(await head()).toBe(before);
  });
});
