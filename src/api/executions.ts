// Running commands over HTTP: the classifier's verdict, an execution's live status, the approvals queue
// (approve runs the command exactly once), and assent windows. Only operators decide; the agent requests.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { classify } from '../domain/risk/index.ts';
import { ApprovalStatus, listApprovals, listSessionExecutions } from '../projections/executions.ts';
import { getSession } from '../projections/sessions.ts';
import { commandContext } from './context.ts';
import { HttpProblem } from './errors.ts';
import { MinPosition, asOfPosition, awaitPosition, stamp } from './freshness.ts';

const Id = z.strictObject({ id: z.uuid({ error: 'the id must be a UUID' }) });
const MAX_COMMAND = 100_000;

export const executionsApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime, readWaitMs } = app.nomos;
  const executions = runtime.executions;

  // Exactly the verdict run would apply: the same pure classifier, nothing else consulted.
  app.post('/classify', { schema: { body: z.strictObject({ command: z.string().max(MAX_COMMAND) }) } }, (request) => classify(request.body.command));

  app.get('/executions/:id', { schema: { params: Id, querystring: z.strictObject({ min_position: MinPosition }) } }, async (request, reply) => {
    await awaitPosition(runtime, ['executions'], request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, ['executions']);
    const status = await executions.status(request.params.id);
    if (!status) throw new HttpProblem(404, 'execution_not_found', `no execution ${request.params.id}`);
    stamp(reply, asOf);
    return { ...status, as_of_position: asOf };
  });

  app.get(
    '/approvals',
    { schema: { querystring: z.strictObject({ status: ApprovalStatus.optional(), session_id: z.uuid({ error: 'session_id must be a UUID' }).optional(), limit: z.coerce.number().int().min(1).max(500).default(100), min_position: MinPosition }) } },
    async (request, reply) => {
      await awaitPosition(runtime, ['executions', 'sessions'], request.query.min_position, readWaitMs);
      const asOf = await asOfPosition(runtime, ['executions', 'sessions']);
      const { status, session_id: sessionId, limit } = request.query;
      const approvals = await listApprovals(runtime.db, { ...(status && { status }), ...(sessionId && { sessionId }), limit });
      stamp(reply, asOf);
      return { approvals, as_of_position: asOf };
    },
  );

  app.get('/sessions/:id/executions', { schema: { params: Id, querystring: z.strictObject({ min_position: MinPosition }) } }, async (request, reply) => {
    await awaitPosition(runtime, ['executions', 'sessions'], request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, ['executions', 'sessions']);
    if (!(await getSession(runtime.db, request.params.id))) throw new HttpProblem(404, 'session_not_found', `no session ${request.params.id}`);
    stamp(reply, asOf);
    return { session_id: request.params.id, executions: await listSessionExecutions(runtime.db, request.params.id), as_of_position: asOf };
  });

  app.post('/approvals/:id/approve', { schema: { params: Id, body: z.strictObject({}).nullish() } }, async (request) =>
    executions.approve(request.params.id, commandContext(request, ['operator'], 'approve a command')),
  );

  app.post('/approvals/:id/deny', { schema: { params: Id, body: z.strictObject({ reason: z.string().trim().min(1).max(2_000) }) } }, async (request) =>
    executions.deny(request.params.id, request.body.reason, commandContext(request, ['operator'], 'deny a command')),
  );

  app.post('/sessions/:id/assent', { schema: { params: Id, body: z.strictObject({ minutes: z.number().int().min(1).max(240) }) } }, async (request) =>
    executions.openAssent(request.params.id, request.body.minutes, commandContext(request, ['operator'], 'open an assent window')),
  );

  done();
};
