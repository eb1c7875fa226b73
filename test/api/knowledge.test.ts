// The knowledge area over real HTTP on real databases: the agent and operators upsert runbooks,
// investigations and notes (by kind and title), search them and list them per entity; and record entity
// attributes and relationships.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { registerEntities } from '../../src/commands/entity.ts';
import { knowledgeStream } from '../../src/domain/knowledge/stream.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,agent:nomos:agent-secret-1-long-enough-for-32-chars,auditor:audit:audit-secret-1-long-enough-for-32-chars');
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const OPERATOR = as('op-secret-1-long-enough-for-32-chars');
const AGENT = as('agent-secret-1-long-enough-for-32-chars');
const AUDITOR = as('audit-secret-1-long-enough-for-32-chars');
const SESSION = '2926de4e-0b73-4c3d-a2cd-ee9a42089b46';

describe.each(databases)('knowledge API on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database, { tokens });
    await registerEntities(
      server.runtime.commandDeps,
      [
        { slug: 'host:strong', type: 'host', ssh: { host: '192.168.8.10' } },
        { slug: 'host:netbird-vps', type: 'host', ssh: { host: '10.0.0.5' }, attributes: { provider: 'hetzner', kernel: '6.1.0-25' } },
        { slug: 'lxc:nfs-export', type: 'lxc', parent: 'host:strong', pve_id: 120 },
        { slug: 'vm:zimaos', type: 'vm', parent: 'host:strong', pve_id: 200 },
      ],
      { actor: { role: 'operator', id: 'alice' } },
    );
  });
  afterAll(async () => {
    await server?.close();
  });

  const head = async () => (await server.runtime.store.head()).position;
  const get = (path: string, headers: Record<string, string> = AGENT) => server.request('GET', path, undefined, headers);
  const post = (path: string, body: unknown, headers: Record<string, string> = AGENT) => server.request('POST', path, body, headers);

  const runbook = {
    kind: 'runbook',
    title: 'Mutating an exported NFS directory',
    body: 'knfsd holds a lock on exported directories, so chown hangs at fchownat. `killall -9 chgrp chown`, `exportfs -u`, chown, `exportfs -a`.',
    about: ['host:strong', 'lxc:nfs-export'],
    tags: ['nfs', 'knfsd'],
    session_id: SESSION,
  };
  const investigation = {
    kind: 'investigation',
    title: 'ZimaOS folder moves fail on ludo-library',
    body: 'The export root was root:root 755 while its subdirectories were 2775 media: a chown of the root fixed it (see the NFS runbook).',
    about: ['vm:zimaos', 'host:strong', 'pool:ludo-lvm'],
  };
  let runbookId = '';
  let investigationId = '';

  it('records knowledge, and reads it back whole', async () => {
    const res = await post('/knowledge', runbook);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ knowledge_id: expect.any(String), result: 'created', position: expect.any(Number), events: ['KnowledgeRecorded'] });
    runbookId = res.body.knowledge_id;
    const read = await get(`/knowledge/${runbookId}?min_position=${res.body.position}`);
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.as_of_position).toBeGreaterThanOrEqual(res.body.position);
    expect(Number(read.headers.get('x-nomos-as-of-position'))).toBe(read.body.as_of_position);
    expect(read.body.knowledge).toEqual({
      id: runbookId,
      kind: 'runbook',
      title: runbook.title,
      body: runbook.body,
      about: runbook.about,
      tags: runbook.tags,
      session_id: SESSION,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it('updates the item of the same kind and title, and appends nothing for the same content', async () => {
    const created = await post('/knowledge', investigation, OPERATOR);
    investigationId = created.body.knowledge_id;
    const body = `${investigation.body} Verified from ZimaOS: touch, mv, rm.`;
    const updated = await post('/knowledge', { ...investigation, title: 'zimaos folder moves fail on LUDO-library', body });
    expect(updated.body).toEqual({ knowledge_id: investigationId, result: 'updated', position: expect.any(Number), events: ['KnowledgeUpdated'] });
    const before = await head();
    const again = await post('/knowledge', { ...investigation, title: 'zimaos folder moves fail on LUDO-library', body });
    expect(again.body).toEqual({ knowledge_id: investigationId, result: 'unchanged', position: updated.body.position, events: [] });
    expect(await head()).toBe(before);
    const events = (await server.runtime.store.readStream(knowledgeStream(investigationId))).events;
    expect(events.map((e) => [e.type, e.metadata.actor])).toEqual([
      ['KnowledgeRecorded', { role: 'operator', id: 'alice' }],
      ['KnowledgeUpdated', { role: 'agent', id: 'nomos' }],
    ]);
  });

  it('searches, a match in the title ranking above one in the body, with snippets', async () => {
    const res = await get(`/knowledge?q=exported&min_position=${await head()}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results.map((r: any) => r.id)).toEqual([runbookId, investigationId]);
    expect(res.body.results[0]).toEqual({
      id: runbookId,
      kind: 'runbook',
      title: runbook.title,
      about: runbook.about,
      tags: runbook.tags,
      snippet: expect.stringContaining('**exported**'),
      updated_at: expect.any(String),
      rank: expect.any(Number),
    });
    expect(res.body.results[0].rank).toBeGreaterThan(res.body.results[1].rank);
    expect((await get('/knowledge?q=chown&limit=1')).body.results).toHaveLength(1);
    expect((await get('/knowledge?q=chown&limit=')).body.results).toHaveLength(2);
  });

  it('answers any query text without an error', async () => {
    for (const q of ['"unterminated', 'a & (b | !c', ':* <-> \\', "'; DROP TABLE knowledge; --", '-', 'ünïcödé 🦀']) {
      const res = await get(`/knowledge?q=${encodeURIComponent(q)}`);
      expect(res.status, `${q}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.results).toBeInstanceOf(Array);
    }
  });

  it('lists the knowledge about an entity, runbooks before investigations', async () => {
    await post('/knowledge', { kind: 'note', title: 'strong has ECC memory', body: 'Seen in dmidecode.', about: ['host:strong'] });
    const res = await get(`/entities/host:strong/knowledge?min_position=${await head()}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.knowledge.map((k: any) => [k.kind, k.title])).toEqual([
      ['runbook', runbook.title],
      ['investigation', 'zimaos folder moves fail on LUDO-library'],
      ['note', 'strong has ECC memory'],
    ]);
    // Knowledge may be about things outside the inventory.
    expect((await get('/entities/pool:ludo-lvm/knowledge')).body.knowledge.map((k: any) => k.id)).toEqual([investigationId]);
    expect((await get('/entities/host:nowhere/knowledge')).body.knowledge).toEqual([]);
  });

  const badKnowledge: Array<[string, unknown, RegExp]> = [
    ['an unknown kind', { ...runbook, kind: 'howto' }, /body\.kind/],
    ['a blank title', { ...runbook, title: '   ' }, /body\.title/],
    ['an empty body', { ...runbook, body: '' }, /body\.body/],
    ['about that is not a slug', { ...runbook, about: ['strong'] }, /body\.about\.0/],
    ['a tag too long', { ...runbook, tags: ['x'.repeat(51)] }, /body\.tags\.0/],
    ['an unknown field', { ...runbook, colour: 'red' }, /colour/],
  ];
  it.each(badKnowledge)('refuses knowledge with %s: 400 naming the field, nothing appended', async (_name, body, message) => {
    const before = await head();
    const res = await post('/knowledge', body);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.detail).toMatch(message);
    expect(await head()).toBe(before);
  });

  it('refuses bad reads: 400 naming the parameter, 404 for an unknown item', async () => {
    expect((await get('/knowledge')).body.detail).toMatch(/querystring\.q/);
    expect((await get('/knowledge?q=%20')).body.detail).toMatch(/querystring\.q/);
    expect((await get('/knowledge?q=a%00b')).body.detail).toMatch(/querystring\.q.*NUL/);
    expect((await get('/knowledge?q=a&limit=0')).body.detail).toMatch(/querystring\.limit/);
    expect((await get('/knowledge?q=a&colour=red')).status).toBe(400);
    expect((await get('/knowledge/not-an-id')).body.detail).toMatch(/params\.id/);
    const unknown = await get('/knowledge/00000000-0000-4000-8000-000000000000');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'knowledge_not_found']);
    expect((await get('/entities/strong/knowledge')).body.detail).toMatch(/params\.slug/);
  });

  it('lets the agent and operators write, and auditors only read', async () => {
    const before = await head();
    const res = await post('/knowledge', { ...runbook, title: 'Auditor note' }, AUDITOR);
    expect(res.status).toBe(403);
    expect((await post('/entities/host:strong/attributes', { attributes: { a: 1 } }, AUDITOR)).status).toBe(403);
    expect((await post('/entities/host:strong/relations', { to: 'vm:zimaos', type: 'mounts' }, AUDITOR)).status).toBe(403);
    expect(await head()).toBe(before);
    expect((await get('/knowledge?q=nfs', AUDITOR)).status).toBe(200);
    expect((await get('/entities/host:strong/relations', AUDITOR)).status).toBe(200);
  });

  it('merges entity attributes: a null value removes a key', async () => {
    const res = await post('/entities/host:netbird-vps/attributes', { attributes: { kernel: '6.1.0-28', apt_pending: 0, provider: null } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ slug: 'host:netbird-vps', position: expect.any(Number), events: ['EntityAttributesUpdated'] });
    const read = await get(`/entities/host:netbird-vps?min_position=${res.body.position}`);
    expect(read.body.entity.attributes).toEqual({ kernel: '6.1.0-28', apt_pending: 0 });
    const again = await post('/entities/host:netbird-vps/attributes', { attributes: { kernel: '6.1.0-28', provider: null } });
    expect(again.body).toEqual({ slug: 'host:netbird-vps', position: -1, events: [] });
  });

  it('records a relationship once, and lists relations with the host of a guest', async () => {
    const res = await post('/entities/lxc:nfs-export/relations', { to: 'vm:zimaos', type: 'exports_to' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.events).toEqual(['RelationshipCreated']);
    expect((await post('/entities/lxc:nfs-export/relations', { to: 'vm:zimaos', type: 'exports_to' })).body.events).toEqual([]);
    const read = await get(`/entities/vm:zimaos/relations?min_position=${res.body.position}`);
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body).toEqual({
      slug: 'vm:zimaos',
      outgoing: [],
      incoming: [
        { from: 'lxc:nfs-export', type: 'exports_to' },
        { from: 'host:strong', type: 'hosts' },
      ],
      as_of_position: expect.any(Number),
    });
    const unknown = await get('/entities/vm:nowhere/relations');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'entity_not_found']);
  });

  it('refuses a relationship to an entity outside the inventory (404) and bad input (400), appending nothing', async () => {
    const before = await head();
    const ghost = await post('/entities/vm:zimaos/relations', { to: 'lxc:ghost', type: 'mounts' });
    expect([ghost.status, ghost.body.code]).toEqual([404, 'unknown_entity']);
    const fromGhost = await post('/entities/lxc:ghost/relations', { to: 'vm:zimaos', type: 'mounts' });
    expect([fromGhost.status, fromGhost.body.code]).toEqual([404, 'unknown_entity']);
    expect((await post('/entities/lxc:ghost/attributes', { attributes: { a: 1 } })).body.code).toBe('unknown_entity');
    expect((await post('/entities/vm:zimaos/relations', { to: 'vm:zimaos', type: 'mounts' })).body.code).toBe('self_relationship');
    expect((await post('/entities/vm:zimaos/relations', { to: 'pool:ludo-lvm', type: 'mounts' })).body.detail).toMatch(/body\.to/);
    expect((await post('/entities/vm:zimaos/relations', { to: 'host:strong', type: 'mounts/nfs' })).body.detail).toMatch(/body\.type/);
    expect((await post('/entities/vm:zimaos/relations', { to: 'host:strong' })).body.detail).toMatch(/body\.type/);
    expect((await post('/entities/vm:zimaos/attributes', { attributes: 'kernel=6.1' })).body.detail).toMatch(/body\.attributes/);
    expect((await post('/entities/vm:zimaos/attributes', { kernel: '6.1' })).status).toBe(400);
    expect((await post('/entities/zimaos/attributes', { attributes: {} })).body.detail).toMatch(/params\.slug/);
    expect(await head()).toBe(before);
  });
});
