// The sessions area: create, drive (commands), list with filters and keyset pages, read one session, its tool
// calls, plan and raw events, and delete. Queries answer from the read models and say how fresh they are.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { deleteSession, executeSessionCommand, handOverSession, startSession } from '../commands/session.ts';
import { CommandText, PathText } from '../domain/command-text.ts';
import { SessionCommand } from '../domain/session/commands.ts';
import { Outcome, Verdict } from '../domain/session/events.ts';
import { sessionStream } from '../domain/session/stream.ts';
import { costOfAll } from '../domain/usage/prices.ts';
import { sessionUsageByModel } from '../projections/model-calls.ts';
import { getPlan } from '../projections/plans.ts';
import { SESSION_FIELDS, type SessionFilter, listSessionsJson, sessionsProjection } from '../projections/sessions.ts';
import { getMessages, getToolCalls, transcriptProjection } from '../projections/transcript.ts';
import { asOf as foldedAsOf } from '../projections/as-of.ts';
import { commandContext } from './context.ts';
import { IncludeDeleted, readableSession, requireAuditReader } from './deleted.ts';
import { HttpProblem } from './errors.ts';
import { MinPosition, asOfPosition, awaitPosition, stamp } from './freshness.ts';
import { PAGE_DEFAULT, PAGE_MAX, PageQuery, linkNext } from './pages.ts';
import { BODY, CALLER, LAG, ROLE, WRITE, notFound } from './responses.ts';
import { SinceQuery } from './since.ts';
import { CommandReply, HandOverReply, InspectReply, Plan, PrincipalName, RunReply, SessionDetail, SessionEvents, SessionPage, TargetSlug, ToolCalls } from './views.ts';

const SessionParams = z.strictObject({ id: z.uuid({ error: 'session id must be a UUID' }) });

/** `cursor=` or `since=` left empty by a script means "not given", not "bad". */
const blankIsAbsent = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

const ReadQuery = z.strictObject({ min_position: MinPosition, include_deleted: IncludeDeleted });

/** Free text in a query string; a NUL character can match nothing and PostgreSQL refuses it. */
const QueryText = (max: number) => z.string().max(max).regex(/^[^\0]*$/, 'must not contain a NUL character');

/** fields=id,title,outcome: only those fields of each session (id is always there); all of them when absent. */
const Fields = z
  .string()
  .max(1_000)
  .describe(`comma-separated fields of a session to return (id always comes): ${SESSION_FIELDS.join(', ')}`)
  .transform((value, ctx) => {
    const names = value.split(',').map((name) => name.trim());
    const unknown = names.filter((name) => !(SESSION_FIELDS as readonly string[]).includes(name));
    if (unknown.length > 0) ctx.addIssue({ code: 'custom', message: `unknown field ${unknown.map((n) => JSON.stringify(n)).join(', ')}; known: ${SESSION_FIELDS.join(', ')}` });
    return names as Array<(typeof SESSION_FIELDS)[number]>;
  });

const ListQuery = z.strictObject({
  outcome: blankIsAbsent(Outcome),
  status: blankIsAbsent(z.enum(['active', 'done', 'failed'])),
  entity_id: blankIsAbsent(QueryText(200)),
  blocker: blankIsAbsent(QueryText(100)),
  outcome_disputed: blankIsAbsent(
    z.enum(['true', 'false'], { error: 'outcome_disputed must be true or false' }).describe('true: only sessions closed as success whose every change was denied, refused or failed; false: only the others'),
  ),
  owner: blankIsAbsent(QueryText(210).regex(/^(operator|agent):[^\s:]{1,200}$/, 'must be role:id with role operator or agent, such as agent:rclone-bot')),
  include_deleted: IncludeDeleted,
  since: blankIsAbsent(SinceQuery),
  min_tokens: blankIsAbsent(z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).describe('sessions whose input + output tokens reach this (as the provider reported them)')),
  limit: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).max(1_000).default(50)),
  cursor: blankIsAbsent(QueryText(500)),
  fields: blankIsAbsent(Fields),
  min_position: MinPosition,
});

/**
 * The next page's address, for the `Link: <…>; rel="next"` header (RFC 8288): the same filters with the next
 * cursor, and `since` as the time it stood for on this page, so that `since=7d` means the same instant on every
 * page of one listing. A client that follows it can ask for the next page as soon as this one's headers arrive.
 */
function nextPageUrl(q: z.infer<typeof ListQuery>, cursor: string): string {
  const next = new URLSearchParams();
  if (q.outcome) next.set('outcome', q.outcome);
  if (q.status) next.set('status', q.status);
  if (q.entity_id) next.set('entity_id', q.entity_id);
  if (q.blocker) next.set('blocker', q.blocker);
  if (q.outcome_disputed) next.set('outcome_disputed', q.outcome_disputed);
  if (q.owner) next.set('owner', q.owner);
  if (q.include_deleted) next.set('include_deleted', q.include_deleted);
  if (q.since) next.set('since', q.since.toISOString());
  if (q.min_tokens !== undefined) next.set('min_tokens', String(q.min_tokens));
  if (q.fields) next.set('fields', q.fields.join(','));
  next.set('limit', String(q.limit));
  next.set('cursor', cursor);
  return `/sessions?${next.toString()}`;
}

const TAGS = ['sessions'];

const NO_SESSION = notFound('No such session (session_not_found)');

const LIST_SCHEMA = {
  summary: 'List sessions',
  tags: TAGS,
  description:
    'Sessions newest first, in keyset pages: {sessions, next_cursor, as_of_position}. Unless it is the last page, the answer carries `Link: <next page>; rel="next"` (the same filters, the next cursor, `since` as the time it stood for).',
  querystring: ListQuery,
  response: { 200: SessionPage, ...CALLER, ...LAG },
};

/** Who may drive a session: the agent and operators; auditors only read. */
const WRITERS = ['operator', 'agent'] as const;


/** The session's own commands plus the ones that run things (classified, approved and executed by the command layer). */
const ApiCommand = z.discriminatedUnion('type', [
  ...SessionCommand.options,
  z.strictObject({ type: z.literal('run'), target: TargetSlug, command: CommandText.min(1) }),
  z.strictObject({ type: z.literal('classify_command'), command: CommandText, target: TargetSlug.optional() }),
  z.strictObject({ type: z.literal('inspect_path'), path: PathText, targets: z.array(TargetSlug).min(1).max(50) }),
]);

const SESSION_READS = ['sessions', 'transcript', 'plans', 'model_calls'] as const;

// No body, or an empty object: a session starts empty. Fastify hands a missing body over as null.
const START_SCHEMA = { summary: 'Start a session', tags: TAGS, body: z.strictObject({}).nullish(), response: { 201: CommandReply, ...CALLER, ...ROLE, ...BODY } };

const COMMAND_SCHEMA = {
  summary: 'Send a command to a session',
  tags: TAGS,
  description: 'A session command (the reply says what it appended), or run, inspect_path and classify_command, which answer as their own endpoints do.',
  params: SessionParams,
  body: ApiCommand,
  response: {
    200: z.union([CommandReply, RunReply, InspectReply, Verdict]),
    ...WRITE,
    ...BODY,
    ...notFound('No such session (session_not_found, session_deleted); run: a target not in the inventory (unknown_entity)'),
  },
};

const readSchema = <T extends z.ZodType>(summary: string, answer: T) => ({
  summary,
  tags: TAGS,
  params: SessionParams,
  querystring: ReadQuery,
  response: { 200: answer, ...CALLER, ...NO_SESSION, ...LAG },
});

const PAGES = `in keyset pages of \`limit\` (default ${PAGE_DEFAULT}, at most ${PAGE_MAX}): unless it is the last page, the answer carries \`Link: <next page>; rel="next"\``;

const SESSION_SCHEMA = {
  ...readSchema('Read a session with its messages', SessionDetail),
  description: "With at_position, the session as the log stood at that position: its events up to there folded again (not today's read model), as the operator saw it then.",
  querystring: ReadQuery.extend({ at_position: z.coerce.number({ error: 'at_position must be a number' }).int({ error: 'at_position must be a whole number' }).min(1, { error: 'at_position must be at least 1' }).optional() }),
};

const EVENTS_SCHEMA = {
  summary: "A session's raw events",
  tags: TAGS,
  description: `In stream order, ${PAGES} and next_cursor.`,
  params: SessionParams,
  querystring: z.strictObject(PageQuery),
  response: { 200: SessionEvents, ...CALLER, ...NO_SESSION },
};

const TOOL_CALLS_SCHEMA = {
  summary: "A session's tool calls, in order",
  tags: TAGS,
  description: `A bare array in seq order, ${PAGES}.`,
  params: SessionParams,
  querystring: z.strictObject({ min_position: MinPosition, include_deleted: IncludeDeleted, ...PageQuery }),
  response: { 200: ToolCalls, ...CALLER, ...NO_SESSION, ...LAG },
};

const DELETE_SCHEMA = {
  summary: 'Delete a session',
  tags: TAGS,
  description: 'Appends a tombstone: the read models drop the session; its raw events stay.',
  params: SessionParams,
  body: z.strictObject({ reason: z.string().max(1000).optional() }).nullish(),
  response: { 200: CommandReply, ...WRITE, ...BODY, ...NO_SESSION },
};

const OWNER_SCHEMA = {
  summary: 'Hand a session over to another principal',
  tags: TAGS,
  description: 'Operators only. The session then belongs to `owner` (role:id, such as agent:rclone-bot): an agent writes only to sessions it owns.',
  params: SessionParams,
  body: z.strictObject({ owner: PrincipalName }),
  response: { 200: HandOverReply, ...WRITE, ...BODY, ...notFound('No such session (session_not_found, session_deleted)') },
};

export const sessionsApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime, readWaitMs } = app.nomos;
  const deps = runtime.commandDeps;

  app.post('/sessions', { schema: START_SCHEMA }, async (request, reply) => {
    const result = await startSession(deps, commandContext(request, WRITERS, 'start a session'));
    return reply.status(201).send(result);
  });

  app.post('/sessions/:id/commands', { schema: COMMAND_SCHEMA }, async (request) => {
    const { id } = request.params;
    const body = request.body;
    const ctx = () => commandContext(request, WRITERS, `send ${body.type}`);
    switch (body.type) {
      case 'run':
        return runtime.executions.run(id, { target: body.target, command: body.command }, ctx());
      case 'inspect_path':
        return runtime.executions.inspectPath(id, body.path, body.targets, ctx());
      case 'classify_command':
        ctx();
        return runtime.executions.classify(body.command, body.target);
      default:
        return executeSessionCommand(deps, id, body, ctx());
    }
  });

  app.get('/sessions', { schema: LIST_SCHEMA }, async (request, reply) => {
    const q = request.query;
    const includeDeleted = q.include_deleted === 'true';
    if (includeDeleted) requireAuditReader(request.principal.role);
    await awaitPosition(runtime, ['sessions'], q.min_position, readWaitMs);
    const filter: SessionFilter = {
      limit: q.limit,
      ...(q.outcome && { outcome: q.outcome }),
      ...(q.status && { status: q.status }),
      ...(q.entity_id && { entity_id: q.entity_id }),
      ...(q.blocker && { blocker: q.blocker }),
      ...(q.outcome_disputed && { outcome_disputed: q.outcome_disputed === 'true' }),
      ...(q.owner && { owner: q.owner }),
      ...(includeDeleted && { include_deleted: true }),
      ...(q.since && { since: q.since }),
      ...(q.min_tokens !== undefined && { min_tokens: q.min_tokens }),
      ...(q.cursor && { cursor: q.cursor }),
    };
    // The page and the position it reflects come from one statement (one snapshot).
    const page = await listSessionsJson(runtime.db, filter, q.fields ?? SESSION_FIELDS, { positionOf: ['sessions'] });
    const asOf = page.as_of_position ?? 0;
    stamp(reply, asOf);
    if (page.next_cursor !== null) void reply.header('link', `<${nextPageUrl(q, page.next_cursor)}>; rel="next"`);
    // The database wrote each session's JSON; it goes out as it came. Fastify sends a string untouched, so the
    // type says what the text holds: a SessionPage.
    const text = `{"sessions":${page.sessions},"next_cursor":${JSON.stringify(page.next_cursor)},"as_of_position":${JSON.stringify(asOf)}}`;
    return reply.type('application/json; charset=utf-8').send(text as unknown as z.output<typeof SessionPage>);
  });

  app.get('/sessions/:id', { schema: SESSION_SCHEMA }, async (request, reply) => {
    const { id } = request.params;
    const at = request.query.at_position;
    if (at !== undefined) {
      const head = (await runtime.store.head()).position;
      if (at > head) throw new HttpProblem(400, 'at_position_past_log', `at_position ${at} is past the log's last event (${head})`);
      const then = await foldedAsOf(runtime.db, runtime.store, sessionStream(id), at, [sessionsProjection, transcriptProjection], async (tx) => ({
        session: await readableSession(tx, id, request.query.include_deleted, request.principal.role),
        messages: await getMessages(tx, id),
      }));
      if (!then) throw new HttpProblem(404, 'session_not_found', `no session ${id} at position ${at}: it began later, or never`);
      stamp(reply, at);
      return { session_id: id, ...then, as_of_position: at };
    }
    await awaitPosition(runtime, SESSION_READS, request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, SESSION_READS);
    const session = await readableSession(runtime.db, id, request.query.include_deleted, request.principal.role);
    const messages = await getMessages(runtime.db, id);
    // Priced as read (prices change, tokens do not): only when the operator configured prices.
    // A session no call was recorded for has no known cost (its log may predate the records), as it has no tokens.
    const usage = Object.keys(runtime.modelPrices).length > 0 ? await sessionUsageByModel(runtime.db, id) : null;
    const cost = usage === null ? {} : { cost: usage.length === 0 ? null : costOfAll(runtime.modelPrices, usage) };
    stamp(reply, asOf);
    return { session_id: id, session: { ...session, ...cost }, messages, as_of_position: asOf };
  });

  app.get('/sessions/:id/tool_calls', { schema: TOOL_CALLS_SCHEMA }, async (request, reply) => {
    const { id } = request.params;
    await awaitPosition(runtime, ['sessions', 'transcript'], request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, ['sessions', 'transcript']);
    await readableSession(runtime.db, id, request.query.include_deleted, request.principal.role);
    stamp(reply, asOf);
    // A bare array, as audit scripts expect; freshness and the next page travel in headers.
    const { limit, cursor } = request.query;
    const calls = await getToolCalls(runtime.db, id, { after: cursor ?? 0, limit: limit + 1 });
    const more = calls.length > limit;
    if (more) calls.length = limit;
    linkNext(reply, `/sessions/${id}/tool_calls`, limit, more ? calls.at(-1)!.seq : null);
    return calls;
  });

  app.get('/sessions/:id/plan', { schema: readSchema("A session's plan steps and goals", Plan) }, async (request, reply) => {
    const { id } = request.params;
    await awaitPosition(runtime, ['sessions', 'plans'], request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, ['sessions', 'plans']);
    await readableSession(runtime.db, id, request.query.include_deleted, request.principal.role);
    stamp(reply, asOf);
    return { session_id: id, ...(await getPlan(runtime.db, id)), as_of_position: asOf };
  });

  // The raw history, straight from the event store: it outlives a deletion, which is itself an event here.
  app.get('/sessions/:id/events', { schema: EVENTS_SCHEMA }, async (request, reply) => {
    const { id } = request.params;
    const { limit, cursor } = request.query;
    // A page, read as a page: the server never holds more of the session than one.
    const { version, events } = await runtime.store.readStream(sessionStream(id), { from: cursor ?? 0, max: limit });
    if (version === -1) throw new HttpProblem(404, 'session_not_found', `no session ${id}`);
    const last = events.at(-1)?.streamPosition;
    const next = linkNext(reply, `/sessions/${id}/events`, limit, last !== undefined && last < version && events.length === limit ? last + 1 : null);
    return {
      session_id: id,
      version,
      next_cursor: next,
      events: events.map((e) => ({
        event_id: e.eventId,
        type: e.type,
        stream_position: e.streamPosition,
        position: e.position,
        data: e.data,
        metadata: e.metadata,
        recorded_at: e.recordedAt,
      })),
    };
  });

  app.post('/sessions/:id/owner', { schema: OWNER_SCHEMA }, async (request) =>
    handOverSession(deps, request.params.id, request.body.owner, commandContext(request, ['operator'], 'hand a session over')),
  );

  app.delete('/sessions/:id', { schema: DELETE_SCHEMA }, async (request) =>
    deleteSession(deps, request.params.id, request.body?.reason ?? null, commandContext(request, ['operator'], 'delete a session')),
  );
  done();
};
