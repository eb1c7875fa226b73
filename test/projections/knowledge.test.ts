// The knowledge read model on real databases: rows as the events leave them, weighted full-text search
// (title above tags above body, snippets of the matching passages, any characters in the query), items per
// entity with runbooks first; and upsert_knowledge through the command layer: one item per kind and title.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/ports/db.ts';
import type { StoredEvent } from '../../src/ports/event-store.ts';
import { knowledgeId, upsertKnowledge } from '../../src/commands/knowledge.ts';
import { loadConfig } from '../../src/config.ts';
import { type KnowledgeEventOf, type KnowledgeEventType, parseKnowledgeEvent } from '../../src/domain/knowledge/events.ts';
import { knowledgeStream } from '../../src/domain/knowledge/stream.ts';
import { getEntityKnowledge, getKnowledge, knowledgeProjection, searchKnowledge } from '../../src/projections/knowledge.ts';
import { Projector } from '../../src/projections/projector.ts';
import { type Runtime, openRuntime } from '../../src/runtime.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { applyEvents, StreamFeed } from './feed.ts';

const feed = new StreamFeed('2026-07-18T09:00:00.000Z', { role: 'agent', id: 'nomos' });

/** One stored event on item `id`'s stream, one minute after the previous one. */
function stored<K extends KnowledgeEventType>(id: string, type: K, data: KnowledgeEventOf<K>['data']): StoredEvent {
  parseKnowledgeEvent(type, data); // a test must not feed what the store would never hold
  return feed.add(knowledgeStream(id), type, data);
}

type Kind = 'runbook' | 'investigation' | 'note';
const record = (id: string, kind: Kind, title: string, body: string, about: string[] = [], tags: string[] = [], session_id: string | null = null) =>
  stored(id, 'KnowledgeRecorded', { knowledge_id: id, kind, title, body, about, tags, session_id });

describe.each(databases)('knowledge projection on $name', (database) => {
  let t: TestDb;
  let db: Db;
  const project = (...events: StoredEvent[]) => applyEvents(db, knowledgeProjection, events);

  beforeAll(async () => {
    t = await database.open();
    db = t.db;
  });
  afterAll(async () => {
    await t.close();
  });

  const NFS = randomUUID();
  const ZIMA = randomUUID();
  const NETBIRD = randomUUID();
  const NOTE = randomUUID();
  const SESSION = randomUUID();

  it('holds a recorded item as its event says, and moves only what an update changed', async () => {
    const created = record(
      NFS,
      'runbook',
      'Mutating an exported NFS directory',
      'knfsd holds a lock on exported directories, so chown hangs at fchownat. Unexport with `exportfs -u`, chown, then `exportfs -a`.',
      ['host:strong', 'lxc:nfs-export'],
      ['nfs', 'knfsd'],
      SESSION,
    );
    await project(created);
    expect(await getKnowledge(db, NFS)).toEqual({
      id: NFS,
      kind: 'runbook',
      title: 'Mutating an exported NFS directory',
      body: created.data.body,
      about: ['host:strong', 'lxc:nfs-export'],
      tags: ['nfs', 'knfsd'],
      session_id: SESSION,
      created_at: created.recordedAt,
      updated_at: created.recordedAt,
    });

    const updated = stored(NFS, 'KnowledgeUpdated', { tags: ['nfs', 'knfsd', 'permissions'], session_id: null });
    await project(updated);
    expect(await getKnowledge(db, NFS)).toMatchObject({ tags: ['nfs', 'knfsd', 'permissions'], body: created.data.body, session_id: null, created_at: created.recordedAt, updated_at: updated.recordedAt });
    expect(await getKnowledge(db, randomUUID())).toBeNull();
  });

  it('ranks a match in the title above one in the body, with snippets of the matching passages', async () => {
    await project(
      record(ZIMA, 'investigation', 'ZimaOS folder moves fail on ludo-library', 'Root-level renames failed: the export root was root:root 755. Fixed by chown on strong; see the NFS runbook.', ['vm:zimaos', 'host:strong', 'pool:ludo-lvm'], ['nfs']),
      record(NETBIRD, 'investigation', 'netbird-mgmt crash-loops after a stack upgrade', 'The management container fetches its OIDC config before traefik is up. docker restart netbird-mgmt after 30 s.', ['host:netbird-vps'], ['apt', 'docker', 'gotcha']),
    );
    const hits = await searchKnowledge(db, 'chown');
    expect(hits.map((h) => h.id)).toEqual([NFS, ZIMA]);
    expect(hits[0]!.rank).toBeGreaterThan(0);

    const titled = await searchKnowledge(db, 'zimaos');
    expect(titled.map((h) => h.id)).toEqual([ZIMA]);
    const [body] = await searchKnowledge(db, 'traefik');
    expect(body).toMatchObject({ id: NETBIRD, kind: 'investigation', title: 'netbird-mgmt crash-loops after a stack upgrade', about: ['host:netbird-vps'], tags: ['apt', 'docker', 'gotcha'] });
    expect(body!.snippet).toContain('**traefik**');
    expect(body!.updated_at).toMatch(/^2026-07-18T/);

    // "export" is in the NFS title and only in the ZIMA body: the title wins, whatever the order they were written.
    expect((await searchKnowledge(db, 'exported')).map((h) => h.id)).toEqual([NFS, ZIMA]);
    // Tags weigh more than a body: "gotcha" only tags NETBIRD; "nfs" tags two, and is in one title.
    expect((await searchKnowledge(db, 'gotcha')).map((h) => h.id)).toEqual([NETBIRD]);
    expect((await searchKnowledge(db, 'nfs'))[0]?.id).toBe(NFS);
  });

  it('reads a query as a search box does, and never fails on what it holds', async () => {
    expect((await searchKnowledge(db, '"exported NFS directory"')).map((h) => h.id)).toEqual([NFS]);
    expect((await searchKnowledge(db, 'chown -knfsd')).map((h) => h.id)).toEqual([ZIMA]);
    expect((await searchKnowledge(db, 'traefik or zimaos')).map((h) => h.id).sort()).toEqual([NETBIRD, ZIMA].sort());
    for (const query of ['"unterminated', "it's", 'a & (b | !c', ':* <-> \\', '-', '(((', "'; DROP TABLE knowledge; --", 'chown\0hang', '   ', '🦀 ünïcödé']) {
      await expect(searchKnowledge(db, query), query).resolves.toBeInstanceOf(Array);
    }
    expect((await searchKnowledge(db, 'the and of')).length).toBe(0);
  });

  it('bounds the number of results', async () => {
    expect(await searchKnowledge(db, 'chown', 1)).toHaveLength(1);
    expect(await searchKnowledge(db, 'chown', 0)).toHaveLength(1);
  });

  it('lists the items about an entity: runbooks, then investigations, then notes, newest first within each', async () => {
    const older = randomUUID();
    await project(
      record(NOTE, 'note', 'strong has ECC memory', 'Noticed in dmidecode.', ['host:strong']),
      record(older, 'investigation', 'strong rebooted at night', 'A kernel panic in the ZFS module.', ['host:strong'], [], null),
    );
    // The older investigation is written again, so it is now the newest of its kind.
    await project(stored(older, 'KnowledgeUpdated', { body: 'A kernel panic in the ZFS module; fixed by a newer kernel.', session_id: null }));
    const items = await getEntityKnowledge(db, 'host:strong');
    expect(items.map((i) => [i.kind, i.id])).toEqual([
      ['runbook', NFS],
      ['investigation', older],
      ['investigation', ZIMA],
      ['note', NOTE],
    ]);
    expect(items[0]).toEqual({
      id: NFS,
      kind: 'runbook',
      title: 'Mutating an exported NFS directory',
      about: ['host:strong', 'lxc:nfs-export'],
      tags: ['nfs', 'knfsd', 'permissions'],
      snippet: expect.stringMatching(/^knfsd holds a lock/),
      updated_at: expect.any(String),
    });
    expect((await getEntityKnowledge(db, 'pool:ludo-lvm')).map((i) => i.id)).toEqual([ZIMA]);
    expect(await getEntityKnowledge(db, 'host:nowhere')).toEqual([]);
  });

  it('searches what an update wrote, and no longer what it replaced', async () => {
    await project(stored(NOTE, 'KnowledgeUpdated', { title: 'strong has registered ECC memory', body: 'Seen in the BIOS.', session_id: null }));
    expect((await searchKnowledge(db, 'dmidecode')).map((h) => h.id)).toEqual([]);
    expect((await searchKnowledge(db, 'bios')).map((h) => h.id)).toEqual([NOTE]);
    expect((await searchKnowledge(db, 'registered')).map((h) => h.id)).toEqual([NOTE]);
  });

  it('gives a long body a snippet of 300 characters in the entity listing', async () => {
    const long = randomUUID();
    await project(record(long, 'note', 'Long note', 'x'.repeat(1000), ['lxc:long']));
    expect((await getEntityKnowledge(db, 'lxc:long'))[0]?.snippet).toBe('x'.repeat(300));
  });
});

describe.each(databases)('upsert_knowledge on $name', (database) => {
  let testDb: TestDb;
  let runtime: Runtime;
  let projector: Projector;
  const ctx = { actor: { role: 'agent' as const, id: 'nomos' }, causationId: 'tool-call-1' };
  const SESSION = '55927f0a-597e-4561-aaef-077623051432';

  beforeAll(async () => {
    testDb = await database.open();
    runtime = await openRuntime(loadConfig({}), { db: testDb.db });
    // The runtime's projectors are not started: the test moves this one itself, so it knows what the read model holds.
    projector = new Projector({ store: runtime.store, db: runtime.db }, knowledgeProjection);
  });
  afterAll(async () => {
    await runtime?.close();
    await testDb?.close();
  });

  const upsert = async (input: Parameters<typeof upsertKnowledge>[1]) => {
    const reply = await upsertKnowledge(runtime.commandDeps, input, ctx);
    await projector.catchUp();
    return reply;
  };
  const streamOf = async (id: string) => (await runtime.store.readStream(knowledgeStream(id))).events;
  const item = {
    kind: 'runbook' as const,
    title: 'netbird-mgmt crash-loops after a stack upgrade',
    body: 'Wait ~30 s for traefik and authentik, then `docker restart netbird-mgmt`.',
    about: ['host:netbird-vps'],
    tags: ['netbird', 'docker'],
  };

  it('derives one id per kind and normalised title', () => {
    const id = knowledgeId('runbook', 'Mutating an exported NFS directory');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(knowledgeId('runbook', '  mutating an EXPORTED   nfs directory ')).toBe(id);
    expect(knowledgeId('investigation', 'Mutating an exported NFS directory')).not.toBe(id);
    expect(knowledgeId('runbook', 'Mutating an exported NFS directories')).not.toBe(id);
  });

  it('creates an item, then updates it under the same kind and title, and appends nothing for the same content', async () => {
    const created = await upsert({ ...item, session_id: SESSION });
    expect(created).toEqual({ knowledge_id: expect.any(String), result: 'created', position: expect.any(Number), events: ['KnowledgeRecorded'] });
    const [event] = await streamOf(created.knowledge_id);
    expect(event?.data).toMatchObject({ knowledge_id: created.knowledge_id, session_id: SESSION });
    expect(event?.metadata).toMatchObject({ actor: { role: 'agent', id: 'nomos' }, causation_id: 'tool-call-1' });

    const body = `${item.body}\n\nCheck with \`docker logs netbird-mgmt\`.`;
    const updated = await upsert({ ...item, title: 'NetBird-mgmt crash-loops after a  stack upgrade ', body });
    expect(updated).toEqual({ knowledge_id: created.knowledge_id, result: 'updated', position: expect.any(Number), events: ['KnowledgeUpdated'] });
    expect(updated.position).toBeGreaterThan(created.position);
    expect((await streamOf(created.knowledge_id)).at(-1)?.data).toEqual({ title: 'NetBird-mgmt crash-loops after a stack upgrade', body, session_id: null });

    const head = (await runtime.store.head()).position;
    const unchanged = await upsert({ ...item, title: 'NetBird-mgmt crash-loops after a stack upgrade', body });
    expect(unchanged).toEqual({ knowledge_id: created.knowledge_id, result: 'unchanged', position: updated.position, events: [] });
    expect((await runtime.store.head()).position).toBe(head);
    expect(await getKnowledge(runtime.db, created.knowledge_id)).toMatchObject({ title: 'NetBird-mgmt crash-loops after a stack upgrade', body, tags: ['netbird', 'docker'] });
  });

  it('keeps kinds apart: an investigation of the same title is another item', async () => {
    const investigation = await upsert({ ...item, kind: 'investigation' });
    expect(investigation.result).toBe('created');
    expect(investigation.knowledge_id).not.toBe(knowledgeId('runbook', item.title));
  });

  it('makes one item of writes that come before the read model has caught up, or at the same time', async () => {
    const note = { kind: 'note' as const, title: 'hubris runs the SSH hop to ZimaOS', body: 'ssh root@192.168.8.195 from host:hubris.', about: ['host:hubris'] };
    // No catch-up in between: nothing of the first write is in the read model yet.
    const first = await upsertKnowledge(runtime.commandDeps, note, ctx);
    const second = await upsertKnowledge(runtime.commandDeps, { ...note, body: `${note.body} Quote twice.` }, ctx);
    expect([first.result, second.result]).toEqual(['created', 'updated']);
    expect(second.knowledge_id).toBe(first.knowledge_id);
    const racing = { ...note, title: 'Two writers, one item' };
    const replies = await Promise.all([1, 2, 3].map((n) => upsertKnowledge(runtime.commandDeps, { ...racing, body: `writer ${n}` }, ctx)));
    expect(new Set(replies.map((r) => r.knowledge_id)).size).toBe(1);
    expect(replies.filter((r) => r.result === 'created')).toHaveLength(1);
    await projector.catchUp();
    expect((await searchKnowledge(runtime.db, 'writers')).map((h) => h.id)).toEqual([replies[0]!.knowledge_id]);
  });

  it('refuses malformed input naming the field, and appends nothing', async () => {
    const head = (await runtime.store.head()).position;
    await expect(upsertKnowledge(runtime.commandDeps, { ...item, about: ['netbird-vps'] }, ctx)).rejects.toThrow(/invalid|about\.0/);
    await expect(upsertKnowledge(runtime.commandDeps, { ...item, title: ' ' }, ctx)).rejects.toSatisfy(
      (e: Error & { rule?: string }) => e.rule === 'invalid_knowledge' && /^title/.test(e.message),
    );
    expect((await runtime.store.head()).position).toBe(head);
  });
});
