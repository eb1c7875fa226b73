// Health and the projections' progress: what an operator checks first when reads look stale.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { projectionStatus } from '../projections/projector.ts';
import { ApiRole } from './auth.ts';
import { CALLER } from './responses.ts';
import { Time } from './views.ts';

const TAGS = ['operations'];

const HEALTH_SCHEMA = {
  summary: 'Health',
  tags: TAGS,
  response: {
    200: z.object({ status: z.string().describe('ok'), event_store: z.string(), read_models: z.string(), head_position: z.number().int() }),
    ...CALLER,
  },
};
const ME_SCHEMA = {
  summary: 'Who the server takes the caller for',
  tags: TAGS,
  response: { 200: z.object({ role: ApiRole, name: z.string(), auth: z.boolean().describe('whether API tokens are required') }), ...CALLER },
};
const PROJECTIONS_SCHEMA = {
  summary: "The read models' progress",
  tags: TAGS,
  description: "Each projection's version, state (live, or rebuilding into shadow tables while the live ones answer), position and lag, and which this server runs.",
  response: {
    200: z.object({
      head_position: z.number().int(),
      projections: z.array(
        z.object({
          name: z.string(),
          version: z.number().int(),
          state: z.enum(['live', 'rebuilding']),
          leader: z.boolean().describe('whether this server runs the projector'),
          position: z.number().int(),
          lag: z.number().int(),
          updated_at: Time,
          rebuild: z
            .object({ version: z.number().int(), position: z.number().int(), lag: z.number().int(), events: z.number().int(), started_at: Time, updated_at: Time })
            .nullable(),
        }),
      ),
    }),
    ...CALLER,
  },
};

export const operationsApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime } = app.nomos;
  const deps = { store: runtime.store, db: runtime.db };

  app.get('/healthz', { schema: HEALTH_SCHEMA }, async () => {
    const head = await runtime.store.head();
    return { status: 'ok', event_store: runtime.description.eventStore, read_models: runtime.description.readModels, head_position: head.position };
  });

  // Who the caller is, as the server sees it: the console shows only what this role may do (the server refuses anyway).
  app.get('/me', { schema: ME_SCHEMA }, (request) => ({ role: request.principal.role, name: request.principal.name, auth: app.nomos.tokens.length > 0 }));

  app.get('/projections', { schema: PROJECTIONS_SCHEMA }, async () => {
    const [status, head] = await Promise.all([projectionStatus(deps, runtime.projections), runtime.store.head()]);
    const leading = new Set(runtime.leading());
    return {
      head_position: head.position,
      // leader: whether this server runs the projector (one server does at a time; the others stand by).
      // state rebuilding: the live tables (version, position, lag) answer while `rebuild` builds the new
      // version into shadow tables; they are swapped in when the rebuild has caught up.
      projections: status.map((s) => ({
        name: s.name,
        version: s.version,
        state: s.state,
        leader: leading.has(s.name),
        position: s.position,
        lag: s.lag,
        updated_at: s.updated_at,
        rebuild: s.rebuild,
      })),
    };
  });
  done();
};
