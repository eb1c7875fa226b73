// GET /changes: an event stream of the position the read models have reached, sent each time it moves after an
// append on any server sharing the database. A console re-reads what it shows on each message, and because the
// position is the read models' (not the log's head), that re-read already sees the change.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { hasReached, livePosition } from '../projections/projector.ts';
import { CALLER, STREAMS, eventStream } from './responses.ts';
import { claimStream, openSse } from './sse.ts';

/** A burst of appends is one message: the console re-reads once, not once per event. */
const CHANGES_EVERY_MS = 250;
/** How often a change not yet applied by the projections is looked at again. */
const APPLIED_POLL_MS = 25;

const CHANGES_SCHEMA = {
  summary: 'Follow how far the read models have come',
  tags: ['operations'],
  description: 'A message each time the read models move past an append on any server: re-read what you show.',
  querystring: z.strictObject({}),
  response: { 200: eventStream('`data: {"position": N}` with `id: N`'), ...CALLER, ...STREAMS },
};

export const changesApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime, readWaitMs } = app.nomos;
  const deps = { store: runtime.store, db: runtime.db };

  // Any role may follow it: it says only how far the log has come. No HEAD twin: it would hold a socket open.
  app.get('/changes', { exposeHeadRoute: false, schema: CHANGES_SCHEMA }, async (request, reply) => {
    const release = claimStream(request);
    const sse = openSse(reply);
    void sse.closed.then(release);
    let gone = false;
    let sent = -1;
    let timer: NodeJS.Timeout | null = null;
    let running = false;
    let again = false;

    // Waits (bounded) until the projections hold the head, then says how far they got.
    const tell = async () => {
      const { position: head } = await runtime.store.head();
      const deadline = Date.now() + readWaitMs;
      let reached = await hasReached(deps, runtime.projections, head);
      while (!reached && !gone && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, APPLIED_POLL_MS));
        reached = await hasReached(deps, runtime.projections, head);
      }
      const position = reached ? head : await livePosition(runtime.db, runtime.projections);
      if (position > sent) {
        sent = position;
        sse.data(position, { position });
      }
      // Still behind after the wait (a rebuild, a stopped projector): look again rather than go quiet.
      if (!reached) again = true;
    };
    const run = () => {
      timer = null;
      if (running) {
        again = true;
        return;
      }
      running = true;
      again = false;
      tell()
        .catch(() => sse.close())
        .finally(() => {
          running = false;
          if (again && !gone) soon();
        });
    };
    const soon = () => {
      timer ??= setTimeout(run, CHANGES_EVERY_MS);
    };

    const changes = runtime.store.changes().subscribe({ next: soon, error: () => sse.close() });
    run();
    await sse.closed;
    gone = true;
    changes.unsubscribe();
    if (timer) clearTimeout(timer);
  });
  done();
};
