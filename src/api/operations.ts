// Health and the projections' progress: what an operator checks first when reads look stale.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { projectionStatus } from '../projections/projector.ts';

export const operationsApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime } = app.nomos;
  const deps = { store: runtime.store, db: runtime.db };

  app.get('/healthz', async () => {
    const head = await runtime.store.head();
    return { status: 'ok', event_store: runtime.description.eventStore, read_models: runtime.description.readModels, head_position: head.position };
  });

  // Who the caller is, as the server sees it: the console shows only what this role may do (the server refuses anyway).
  app.get('/me', (request) => ({ role: request.principal.role, name: request.principal.name, auth: app.nomos.tokens.length > 0 }));

  app.get('/projections', async () => {
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
