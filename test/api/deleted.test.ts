// Sessions have owners in the read model, and a deleted session leaves every list by default but stays reachable
// for operators and auditors (include_deleted=true, marked deleted), over real HTTP on both databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { fetchSessions } from '../../src/cli/audit.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const OP = 'operator-token-0123456789abcdef-0123';
const AGENT = 'agent-token-0123456789abcdef-012345';
const AUDIT = 'auditor-token-0123456789abcdef-0123';
const tokens = parseTokens(`operator:alice:${OP},agent:bot:${AGENT},auditor:carol:${AUDIT}`);
const operator = { authorization: `Bearer ${OP}` };
const agent = { authorization: `Bearer ${AGENT}` };
const auditor = { authorization: `Bearer ${AUDIT}` };

describe.each(databases)('owners and deleted sessions in the read model on $name', (database) => {
  let server: TestServer;
  let kept: string;
  let gone: string;
  let at: number;
  const head = async () => (await server.runtime.store.head()).position;
  const ids = (body: { sessions: Array<{ id: string }> }) => body.sessions.map((s) => s.id);

  beforeAll(async () => {
    server = await startTestServer(database, { tokens });
    kept = (await server.request('POST', '/sessions', undefined, agent)).body.session_id as string;
    gone = (await server.request('POST', '/sessions', undefined, operator)).body.session_id as string;
    const deleted = await server.request('DELETE', `/sessions/${gone}`, { reason: 'a test' }, operator);
    expect(deleted.status).toBe(200);
    at = deleted.body.position as number;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists each session with its owner, and filters on it', async () => {
    const all = await server.request('GET', `/sessions?min_position=${at}`, undefined, operator);
    expect(all.status).toBe(200);
    expect(all.body.sessions).toEqual([expect.objectContaining({ id: kept, owner: { role: 'agent', id: 'bot' }, deleted: false, deleted_at: null, deleted_by: null })]);
    expect(ids((await server.request('GET', `/sessions?owner=agent:bot&min_position=${at}`, undefined, operator)).body)).toEqual([kept]);
    expect(ids((await server.request('GET', `/sessions?owner=operator:alice&min_position=${at}`, undefined, operator)).body)).toEqual([]);
  });

  it('leaves a deleted session out by default, and shows it marked with include_deleted=true to operators and auditors', async () => {
    for (const as of [operator, auditor]) {
      const res = await server.request('GET', `/sessions?include_deleted=true&min_position=${at}`, undefined, as);
      expect(res.status).toBe(200);
      expect(ids(res.body)).toEqual([gone, kept]);
      expect(res.body.sessions[0]).toMatchObject({ owner: { role: 'operator', id: 'alice' }, deleted: true, deleted_by: { role: 'operator', id: 'alice' } });
      expect(typeof res.body.sessions[0].deleted_at).toBe('string');
      const hidden = await server.request('GET', `/sessions/${gone}?min_position=${at}`, undefined, as);
      expect(hidden.status).toBe(404);
      expect(hidden.body).toMatchObject({ code: 'session_deleted' });
      expect(hidden.body.detail).toContain('include_deleted=true');
      const one = await server.request('GET', `/sessions/${gone}?include_deleted=true&min_position=${at}`, undefined, as);
      expect(one.status).toBe(200);
      expect(one.body.session).toMatchObject({ id: gone, deleted: true });
    }
  });

  it('refuses include_deleted=true to an agent (403), and hides a deleted session from it', async () => {
    const res = await server.request('GET', `/sessions?include_deleted=true&min_position=${at}`, undefined, agent);
    expect(res.status).toBe(403);
    expect((await server.request('GET', `/sessions/${gone}?min_position=${at}`, undefined, agent)).status).toBe(404);
    for (const path of ['', '/tool_calls', '/plan']) {
      const res = await server.request('GET', `/sessions/${gone}${path}?include_deleted=true`, undefined, agent);
      expect(res.status, path).toBe(403);
    }
  });

  it("reaches deleted sessions through nomos audit's --include-deleted, for an auditor, and refuses an agent", async () => {
    const env = (token: string) => ({ NOMOS_URL: server.url, NOMOS_TOKEN: token });
    expect((await fetchSessions({ since: '7d' }, env(AUDIT))).sessions.map((s) => s.id)).toEqual([kept]);
    expect((await fetchSessions({ since: '7d', includeDeleted: true }, env(AUDIT))).sessions.map((s) => s.id)).toEqual([gone, kept]);
    await expect(fetchSessions({ since: '7d', includeDeleted: true }, env(AGENT))).rejects.toThrow(/403|forbidden|deleted/);
  });

  it('answers a bad include_deleted or owner with a 400 naming it, and appends nothing', async () => {
    const before = await head();
    for (const query of ['include_deleted=yes', 'owner=auditor:carol', 'owner=bot']) {
      const res = await server.request('GET', `/sessions?${query}`, undefined, operator);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain(query.split('=')[0]!);
    }
    expect(await head()).toBe(before);
  });
});
