// The knowledge area: runbooks, investigations and notes written back by the agent or an operator (upsert
// by kind and title), full-text search and per-entity listings; and the facts around an entity that the
// agent records beside them: attributes (merged) and relationships to other entities.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createRelationship, updateEntityAttributes } from '../commands/entity.ts';
import { upsertKnowledge } from '../commands/knowledge.ts';
import { AttributesUpdate, RelationshipSpec } from '../domain/entity/commands.ts';
import { EntitySlug } from '../domain/entity/events.ts';
import { UpsertKnowledge } from '../domain/knowledge/commands.ts';
import { AboutSlug } from '../domain/knowledge/events.ts';
import { getRelations } from '../projections/entities.ts';
import { MAX_SEARCH_RESULTS, getEntityKnowledge, getKnowledge, searchKnowledge } from '../projections/knowledge.ts';
import { commandContext } from './context.ts';
import { HttpProblem } from './errors.ts';
import { MinPosition, asOfPosition, awaitPosition, stamp } from './freshness.ts';
import { BODY, CALLER, LAG, WRITE, notFound } from './responses.ts';
import { AsOf, EntityCommandReply, Knowledge, KnowledgeSummary, Relations, UpsertKnowledgeReply } from './views.ts';

/** `limit=` left empty by a script means "not given", not "bad". */
const blankIsAbsent = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema);

const SearchQuery = z.strictObject({
  q: z
    .string()
    .max(1_000)
    .regex(/^[^\0]*$/, 'must not contain a NUL character')
    .refine((q) => q.trim() !== '', 'q must not be blank: send the words to search for'),
  limit: blankIsAbsent(z.coerce.number().int().min(1).max(MAX_SEARCH_RESULTS).default(10)),
  min_position: MinPosition,
});
const ReadQuery = z.strictObject({ min_position: MinPosition });
const KnowledgeParams = z.strictObject({ id: z.uuid({ error: 'knowledge id must be a UUID' }) });
/** Knowledge may be about things outside the inventory (pool:ludo-lvm), so any TYPE:NAME is read. */
const AboutParams = z.strictObject({ slug: AboutSlug });
const EntityParams = z.strictObject({ slug: EntitySlug });

/** Who may write knowledge and entity facts: the agent and operators; auditors only read. */
const WRITERS = ['operator', 'agent'] as const;

const KNOWLEDGE_READS = ['knowledge'] as const;
const ENTITY_READS = ['entities'] as const;

const NO_ENTITY = notFound('No such entity (entity_not_found, unknown_entity)');

const UPSERT_SCHEMA = {
  summary: 'Write a runbook, investigation or note',
  tags: ['knowledge'],
  description: 'Upsert by kind and title: the same kind and title update the one item.',
  body: UpsertKnowledge,
  response: { 200: UpsertKnowledgeReply, ...WRITE, ...BODY },
};
const SEARCH_SCHEMA = {
  summary: 'Search knowledge',
  tags: ['knowledge'],
  description: 'Full-text search, best first; q is read as a web search box reads it ("phrases", or, -excluded).',
  querystring: SearchQuery,
  response: { 200: z.object({ results: z.array(KnowledgeSummary.extend({ rank: z.number() })), ...AsOf }), ...CALLER, ...LAG },
};
const READ_SCHEMA = {
  summary: 'Read a knowledge item',
  tags: ['knowledge'],
  params: KnowledgeParams,
  querystring: ReadQuery,
  response: { 200: z.object({ knowledge: Knowledge, ...AsOf }), ...CALLER, ...notFound('No such item (knowledge_not_found)'), ...LAG },
};
const ABOUT_SCHEMA = {
  summary: 'Knowledge about an entity',
  tags: ['knowledge'],
  params: AboutParams,
  querystring: ReadQuery,
  response: { 200: z.object({ knowledge: z.array(KnowledgeSummary), ...AsOf }), ...CALLER, ...LAG },
};
const RELATIONS_SCHEMA = {
  summary: "An entity's relationships, both ways",
  tags: ['fleet'],
  params: EntityParams,
  querystring: ReadQuery,
  response: { 200: Relations, ...CALLER, ...NO_ENTITY, ...LAG },
};
const ATTRIBUTES_SCHEMA = {
  summary: "Merge facts into an entity's attributes",
  tags: ['fleet'],
  description: 'A null value removes a key.',
  params: EntityParams,
  body: AttributesUpdate,
  response: { 200: EntityCommandReply, ...WRITE, ...BODY, ...NO_ENTITY },
};
const RELATE_SCHEMA = {
  summary: 'Relate an entity to another',
  tags: ['fleet'],
  params: EntityParams,
  body: RelationshipSpec,
  response: { 200: EntityCommandReply, ...WRITE, ...BODY, ...NO_ENTITY },
};

export const knowledgeApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime, readWaitMs } = app.nomos;
  const deps = runtime.commandDeps;

  app.post('/knowledge', { schema: UPSERT_SCHEMA }, async (request) =>
    upsertKnowledge(deps, request.body, commandContext(request, WRITERS, 'write knowledge')),
  );

  app.get('/knowledge', { schema: SEARCH_SCHEMA }, async (request, reply) => {
    const { q, limit, min_position } = request.query;
    await awaitPosition(runtime, KNOWLEDGE_READS, min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, KNOWLEDGE_READS);
    const results = await searchKnowledge(runtime.db, q, limit);
    stamp(reply, asOf);
    return { results, as_of_position: asOf };
  });

  app.get('/knowledge/:id', { schema: READ_SCHEMA }, async (request, reply) => {
    const { id } = request.params;
    await awaitPosition(runtime, KNOWLEDGE_READS, request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, KNOWLEDGE_READS);
    const knowledge = await getKnowledge(runtime.db, id);
    if (!knowledge) throw new HttpProblem(404, 'knowledge_not_found', `no knowledge ${id}; search with GET /knowledge?q=`);
    stamp(reply, asOf);
    return { knowledge, as_of_position: asOf };
  });

  app.get('/entities/:slug/knowledge', { schema: ABOUT_SCHEMA }, async (request, reply) => {
    await awaitPosition(runtime, KNOWLEDGE_READS, request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, KNOWLEDGE_READS);
    const knowledge = await getEntityKnowledge(runtime.db, request.params.slug);
    stamp(reply, asOf);
    return { knowledge, as_of_position: asOf };
  });

  app.get('/entities/:slug/relations', { schema: RELATIONS_SCHEMA }, async (request, reply) => {
    const { slug } = request.params;
    await awaitPosition(runtime, ENTITY_READS, request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, ENTITY_READS);
    const relations = await getRelations(runtime.db, slug);
    if (!relations) throw new HttpProblem(404, 'entity_not_found', `no entity ${slug}; list the inventory with GET /entities`);
    stamp(reply, asOf);
    return { slug, ...relations, as_of_position: asOf };
  });

  app.post('/entities/:slug/attributes', { schema: ATTRIBUTES_SCHEMA }, async (request) =>
    updateEntityAttributes(deps, request.params.slug, request.body.attributes, commandContext(request, WRITERS, 'update entity attributes')),
  );

  app.post('/entities/:slug/relations', { schema: RELATE_SCHEMA }, async (request) =>
    createRelationship(deps, { from: request.params.slug, ...request.body }, commandContext(request, WRITERS, 'create relationships')),
  );
  done();
};
