// Running commands over HTTP: the classifier's verdict, an execution's live status, the approvals queue
// (approve runs the command exactly once), and assent windows. Only operators decide; the agent requests.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CommandText } from '../domain/command-text.ts';
import { Actor } from '../domain/messages.ts';
import { Verdict } from '../domain/session/events.ts';
import { ApprovalStatus, countCommandLog, listApprovals, listCommandLog, pageSessionExecutions } from '../projections/executions.ts';
import { CommandLogExport, CommandLogPage, CommandLogQuery, EXPORT_CAP, LOG_PAGE_DEFAULT, LOG_PAGE_MAX, exportStream, filterOf, nextPagePath, wantsCsv, withLinks } from './command-log.ts';
import { commandContext } from './context.ts';
import { IncludeDeleted, deletedProblem, includesDeleted, readableSession } from './deleted.ts';
import { HttpProblem } from './errors.ts';
import { MinPosition, asOfPosition, awaitPosition, stamp } from './freshness.ts';
import { PAGE_DEFAULT, PAGE_MAX, PageQuery, linkNext } from './pages.ts';
import { BODY, CALLER, LAG, WRITE, notFound } from './responses.ts';
import { Approval, AsOf, Execution, ExecutionStatusReply, PrincipalName, RunReply, TargetSlug, Uuid, Written } from './views.ts';

const Id = z.strictObject({ id: z.uuid({ error: 'the id must be a UUID' }) });

const TAGS = ['executions'];
const NO_APPROVAL = notFound('No such approval (approval_not_found)');
const NO_SESSION = notFound('No such session (session_not_found)');

const CLASSIFY_SCHEMA = {
  summary: 'Classify a shell command',
  tags: TAGS,
  description:
    "The verdict run would apply (risk class, rule, reason, the inner commands unwrapped) with the operator's policy's decision (decision, rule_id, policy_version): on `target` when named, else under the rules that hold on every target; nothing runs.",
  body: z.strictObject({ command: CommandText, target: TargetSlug.optional() }),
  response: { 200: Verdict, ...CALLER, ...BODY },
};
const EXECUTION_SCHEMA = {
  summary: 'Read an execution, with its output so far while it runs',
  tags: TAGS,
  params: Id,
  querystring: z.strictObject({ min_position: MinPosition, include_deleted: IncludeDeleted }),
  response: { 200: ExecutionStatusReply, ...CALLER, ...notFound('No such execution (execution_not_found), or its session was deleted (session_deleted)'), ...LAG },
};
const COMMAND_LOG_SCHEMA = {
  summary: 'The command log: executions across sessions',
  tags: TAGS,
  description:
    `Newest requested first, narrowed by target, host (the host and its containers and VMs), actor (who requested), approver (who granted or denied), risk, status, rule (rule_id), session and since/until (on requested_at), in keyset pages of \`limit\` (default ${LOG_PAGE_DEFAULT}, at most ${LOG_PAGE_MAX}) with next_cursor and \`Link: <next page>; rel="next"\`. ` +
    `format=csv or format=json answers every matching row as an attachment instead (newest first, at most ${EXPORT_CAP}; \`x-nomos-export-truncated: true\` and the JSON's \`truncated\` say more matched). A repeated or bad parameter is refused by name (400).`,
  querystring: CommandLogQuery,
  response: {
    200: {
      description: 'A page of the log; with format=json, every matching row as an attachment; with format=csv (or Accept: text/csv), the rows as RFC 4180 CSV with a header row',
      content: {
        'application/json': { schema: z.union([CommandLogPage, CommandLogExport]) },
        'text/csv': { schema: z.string() },
      },
    },
    ...CALLER,
    ...LAG,
  },
};
const APPROVALS_SCHEMA = {
  summary: 'List approvals',
  tags: TAGS,
  description: "With a status, oldest first (the pending queue); without, newest first. A deleted session's approvals only with include_deleted=true (operators and auditors).",
  querystring: z.strictObject({
    status: ApprovalStatus.optional(),
    session_id: z.uuid({ error: 'session_id must be a UUID' }).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
    min_position: MinPosition,
    include_deleted: IncludeDeleted,
  }),
  response: { 200: z.object({ approvals: z.array(Approval), ...AsOf }), ...CALLER, ...LAG },
};
const SESSION_EXECUTIONS_SCHEMA = {
  summary: "A session's executions",
  tags: TAGS,
  params: Id,
  description: `In the order they were requested, in keyset pages of \`limit\` (default ${PAGE_DEFAULT}, at most ${PAGE_MAX}): unless it is the last page, the answer carries next_cursor and \`Link: <next page>; rel="next"\`.`,
  querystring: z.strictObject({ min_position: MinPosition, include_deleted: IncludeDeleted, ...PageQuery }),
  response: {
    200: z.object({ session_id: Uuid, executions: z.array(Execution), next_cursor: z.string().nullable().describe('the next page (null on the last)'), ...AsOf }),
    ...CALLER,
    ...NO_SESSION,
    ...LAG,
  },
};
const APPROVE_SCHEMA = {
  summary: 'Approve a command, which then runs once',
  tags: TAGS,
  params: Id,
  body: z.strictObject({}).nullish(),
  response: { 200: z.object({ approval_id: Uuid, status: z.literal('granted'), ...Written, execution: RunReply }), ...WRITE, ...BODY, ...NO_APPROVAL },
};
const DENY_SCHEMA = {
  summary: 'Deny a command',
  tags: TAGS,
  params: Id,
  body: z.strictObject({ reason: z.string().trim().min(1).max(2_000) }),
  response: { 200: z.object({ approval_id: Uuid, status: z.literal('denied'), ...Written }), ...WRITE, ...BODY, ...NO_APPROVAL },
};
const ASSENT_SCHEMA = {
  summary: 'Open an assent window on a session',
  tags: TAGS,
  description: "For its minutes, config_mutation commands that `for` (role:id; the session's owner when absent) sends in the session run without asking.",
  params: Id,
  body: z.strictObject({ minutes: z.number().int().min(1).max(240), for: PrincipalName.optional() }),
  response: { 200: z.object({ session_id: Uuid, until: z.string(), for: Actor.nullable().describe('whose commands run under it'), ...Written }), ...WRITE, ...BODY, ...NO_SESSION },
};

export const executionsApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime, readWaitMs } = app.nomos;
  const executions = runtime.executions;

  // Exactly the verdict run would apply: the same classifier, time bound and policy.
  app.post('/classify', { schema: CLASSIFY_SCHEMA }, (request) => executions.classify(request.body.command, request.body.target));

  app.get('/executions/:id', { schema: EXECUTION_SCHEMA }, async (request, reply) => {
    await awaitPosition(runtime, ['executions'], request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, ['executions']);
    const withDeleted = includesDeleted(request.query.include_deleted, request.principal.role);
    const status = await executions.status(request.params.id);
    if (!status) throw new HttpProblem(404, 'execution_not_found', `no execution ${request.params.id}`);
    if (status.session_deleted === true && !withDeleted) throw deletedProblem(`execution ${request.params.id} belongs to a deleted session`, request.principal.role);
    stamp(reply, asOf);
    return { ...status, as_of_position: asOf };
  });

  // The command log reads the inventory too: a host's guests are the entities whose parent it is.
  app.get('/executions', { schema: COMMAND_LOG_SCHEMA }, async (request, reply) => {
    const reads = ['executions', 'entities'];
    await awaitPosition(runtime, reads, request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, reads);
    const filter = filterOf(request.query, includesDeleted(request.query.include_deleted, request.principal.role));
    stamp(reply, asOf);
    const format = request.query.format ?? (wantsCsv(request.headers.accept) ? 'csv' : undefined);
    if (format !== undefined) {
      const truncated = (await countCommandLog(runtime.db, filter, EXPORT_CAP + 1)) > EXPORT_CAP;
      const file = exportStream(runtime.db, filter, format, asOf, truncated);
      return reply
        .type(file.type)
        .header('content-disposition', `attachment; filename="${file.fileName}"`)
        .header('x-nomos-export-truncated', String(truncated))
        // Fastify pipes a stream as it is, unserialised; the type says what the stream holds.
        .send(file.body as unknown as string);
    }
    const limit = request.query.limit ?? LOG_PAGE_DEFAULT;
    const page = await listCommandLog(runtime.db, filter, { limit, ...(request.query.cursor !== undefined && { cursor: request.query.cursor }) });
    if (page.next_cursor !== null) void reply.header('link', `<${nextPagePath(request.query, limit, page.next_cursor)}>; rel="next"`);
    return { executions: page.executions.map(withLinks), next_cursor: page.next_cursor, as_of_position: asOf };
  });

  app.get('/approvals', { schema: APPROVALS_SCHEMA }, async (request, reply) => {
    await awaitPosition(runtime, ['executions', 'sessions'], request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, ['executions', 'sessions']);
    const { status, session_id: sessionId, limit } = request.query;
    const includeDeleted = includesDeleted(request.query.include_deleted, request.principal.role);
    const approvals = await listApprovals(runtime.db, { ...(status && { status }), ...(sessionId && { sessionId }), includeDeleted, limit });
    stamp(reply, asOf);
    return { approvals, as_of_position: asOf };
  });

  app.get('/sessions/:id/executions', { schema: SESSION_EXECUTIONS_SCHEMA }, async (request, reply) => {
    await awaitPosition(runtime, ['executions', 'sessions'], request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, ['executions', 'sessions']);
    await readableSession(runtime.db, request.params.id, request.query.include_deleted, request.principal.role);
    const { limit, cursor } = request.query;
    const page = await pageSessionExecutions(runtime.db, request.params.id, { after: cursor ?? -1, limit });
    stamp(reply, asOf);
    const next = linkNext(reply, `/sessions/${request.params.id}/executions`, limit, page.next);
    return { session_id: request.params.id, executions: page.executions, next_cursor: next, as_of_position: asOf };
  });

  app.post('/approvals/:id/approve', { schema: APPROVE_SCHEMA }, async (request) =>
    executions.approve(request.params.id, commandContext(request, ['operator'], 'approve a command')),
  );

  app.post('/approvals/:id/deny', { schema: DENY_SCHEMA }, async (request) =>
    executions.deny(request.params.id, request.body.reason, commandContext(request, ['operator'], 'deny a command')),
  );

  app.post('/sessions/:id/assent', { schema: ASSENT_SCHEMA }, async (request) =>
    executions.openAssent(request.params.id, request.body.minutes, request.body.for ?? null, commandContext(request, ['operator'], 'open an assent window')),
  );

  done();
};
