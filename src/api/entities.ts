// The inventory area: operators register hosts, containers and VMs (one entity or a whole inventory per
// request) and retire or restore them; anyone may list and read them from the entities read model, which says
// how fresh it is, each host with its health.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { registerEntities, restoreEntity, retireEntity } from '../commands/entity.ts';
import { InventoryPayload } from '../domain/entity/commands.ts';
import { EntityLifecycle, EntitySlug, EntityType } from '../domain/entity/events.ts';
import { type EntityFilter, getEntity, listEntities } from '../projections/entities.ts';
import { commandContext } from './context.ts';
import { HttpProblem } from './errors.ts';
import { MinPosition, asOfPosition, awaitPosition, stamp } from './freshness.ts';
import { BODY, CALLER, LAG, WRITE, notFound } from './responses.ts';
import { AsOf, Entity, EntityCommandReply, RegistrationReply } from './views.ts';

/** `type=` left empty by a script means "not given", not "bad". */
const blankIsAbsent = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

/** state=retired lists the retired entities; include=retired lists them beside the others. */
const ListQuery = z.strictObject({
  type: blankIsAbsent(EntityType),
  state: blankIsAbsent(z.union([EntityLifecycle, z.literal('retired')])),
  include: blankIsAbsent(z.literal('retired')),
  min_position: MinPosition,
});
const RetireBody = z.strictObject({ reason: z.string().max(1000).optional() }).nullish();
const EntityParams = z.strictObject({ slug: EntitySlug });
const ReadQuery = z.strictObject({ min_position: MinPosition });

const READS = ['entities'] as const;

const TAGS = ['fleet'];

const REGISTER_SCHEMA = {
  summary: 'Register hosts, containers and VMs',
  tags: TAGS,
  description: 'One entity or a whole inventory; each is created, updated or left unchanged.',
  body: InventoryPayload,
  response: { 200: RegistrationReply, ...WRITE, ...BODY },
};
const LIST_SCHEMA = {
  summary: 'List the inventory',
  tags: TAGS,
  querystring: ListQuery,
  response: { 200: z.object({ entities: z.array(Entity), ...AsOf }), ...CALLER, ...LAG },
};
const READ_SCHEMA = {
  summary: 'Read an entity',
  tags: TAGS,
  params: EntityParams,
  querystring: ReadQuery,
  response: { 200: z.object({ entity: Entity, ...AsOf }), ...CALLER, ...notFound('No such entity (entity_not_found)'), ...LAG },
};

const RETIRE_SCHEMA = {
  summary: 'Retire an entity',
  tags: TAGS,
  description: 'Appends EntityRetired: the entity stays in history, leaves the default lists, and no command runs on it or its guests.',
  params: EntityParams,
  body: RetireBody,
  response: { 200: EntityCommandReply, ...WRITE, ...BODY, ...notFound('No such entity (unknown_entity)') },
};
const RESTORE_SCHEMA = {
  summary: 'Restore a retired entity',
  tags: TAGS,
  params: EntityParams,
  body: RetireBody,
  response: { 200: EntityCommandReply, ...WRITE, ...BODY, ...notFound('No such entity (unknown_entity)') },
};

export const entitiesApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime, readWaitMs } = app.nomos;

  app.post('/entities', { schema: REGISTER_SCHEMA }, async (request) =>
    registerEntities(runtime.commandDeps, request.body.entities, commandContext(request, ['operator'], 'register entities')),
  );

  app.get('/entities', { schema: LIST_SCHEMA }, async (request, reply) => {
    const q = request.query;
    await awaitPosition(runtime, READS, q.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, READS);
    const filter: EntityFilter = {
      ...(q.type && { type: q.type }),
      ...(q.state !== undefined && q.state !== 'retired' && { state: q.state }),
      retired: q.state === 'retired' ? 'only' : q.include === 'retired' ? 'all' : 'active',
    };
    const entities = await listEntities(runtime.db, filter);
    stamp(reply, asOf);
    return { entities, as_of_position: asOf };
  });

  app.delete('/entities/:slug', { schema: RETIRE_SCHEMA }, async (request) =>
    retireEntity(runtime.commandDeps, request.params.slug, request.body?.reason ?? '', commandContext(request, ['operator'], 'retire an entity')),
  );

  app.post('/entities/:slug/restore', { schema: RESTORE_SCHEMA }, async (request) =>
    restoreEntity(runtime.commandDeps, request.params.slug, request.body?.reason ?? '', commandContext(request, ['operator'], 'restore an entity')),
  );

  app.get('/entities/:slug', { schema: READ_SCHEMA }, async (request, reply) => {
    const { slug } = request.params;
    await awaitPosition(runtime, READS, request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, READS);
    const entity = await getEntity(runtime.db, slug);
    if (!entity) throw new HttpProblem(404, 'entity_not_found', `no entity ${slug}; list the inventory with GET /entities`);
    stamp(reply, asOf);
    return { entity, as_of_position: asOf };
  });
  done();
};
