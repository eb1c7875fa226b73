// Chatting with the agent: POST /chat posts the message, starts a turn and streams it back as SSE until the
// turn is done; POST /sessions/:id/cancel stops a running turn; POST /sessions/:id/continue starts one by hand.
// With no model provider configured these answer 503 saying what to set; the rest of the API works on.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { executeSessionCommand, startSession } from '../commands/session.ts';
import { commandContext } from './context.ts';
import { HttpProblem } from './errors.ts';
import { BODY, WRITE, eventStream, notFound, unavailable } from './responses.ts';
import { openSse, streamSession } from './sse.ts';
import { Uuid, Written } from './views.ts';

const Id = z.strictObject({ id: z.uuid({ error: 'session id must be a UUID' }) });
const WRITERS = ['operator', 'agent'] as const;

const TAGS = ['chat'];
/** What every chat route may answer besides its own. */
const REFUSALS = {
  ...WRITE,
  ...BODY,
  ...notFound('No such session (session_not_found, session_deleted)'),
  ...unavailable('No model provider is configured (no_model_provider); the rest of the API works on'),
};

const CHAT_SCHEMA = {
  summary: 'Send a message and stream the turn it starts',
  tags: TAGS,
  description:
    'Posts the message (in a new session unless session_id names one), starts a turn and streams its events (text deltas, tool calls, approvals, done) until it is done. 409 turn_running while a turn runs, with nothing recorded.',
  body: z.strictObject({ session_id: z.uuid().optional(), message: z.string().trim().min(1).max(100_000) }),
  response: { 200: eventStream("The turn's events, each `data:` a JSON message with an `id:`; resume with GET /sessions/{id}/stream"), ...REFUSALS },
};
const CANCEL_SCHEMA = {
  summary: 'Cancel the running turn',
  tags: TAGS,
  params: Id,
  body: z.strictObject({}).nullish(),
  response: { 200: z.object({ session_id: Uuid, ...Written }), ...REFUSALS },
};
const CONTINUE_SCHEMA = {
  summary: 'Start a turn without a new message',
  tags: TAGS,
  params: Id,
  body: z.strictObject({}).nullish(),
  response: { 202: z.object({ session_id: Uuid, turn_id: Uuid, ...Written, stream: z.string().describe("the turn's event stream") }), ...REFUSALS },
};

export const chatApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime } = app.nomos;
  const agentOrFail = () => {
    if (!runtime.agent) {
      throw new HttpProblem(503, 'no_model_provider', 'no model provider is configured: set OPENAI_BASE_URL (any OpenAI-compatible server) and OPENAI_API_KEY, and NOMOS_MODEL; the rest of the API works without them');
    }
    return runtime.agent;
  };

  app.post('/chat', { schema: CHAT_SCHEMA }, async (request, reply) => {
    const agent = agentOrFail();
    const ctx = commandContext(request, WRITERS, 'chat');
    const sessionId = request.body.session_id ?? (await startSession(runtime.commandDeps, ctx)).session_id;
    // The message is posted only once the turn is ours: while a turn runs on any server this answers 409
    // turn_running and records nothing.
    const post = () => executeSessionCommand(runtime.commandDeps, sessionId, { type: 'post_user_message', text: request.body.message }, ctx);
    const { before: posted } = await agent.startTurn(sessionId, 'user_message', ctx, post);
    // The turn's events all come after the user message: stream from there until its `done`.
    const sse = openSse(reply);
    await streamSession({ store: runtime.store, bus: runtime.bus }, sessionId, sse, { after: posted?.position ?? 0, untilDone: true });
  });

  app.post('/sessions/:id/cancel', { schema: CANCEL_SCHEMA }, async (request) => {
    const agent = agentOrFail();
    const result = await agent.cancel(request.params.id, commandContext(request, ['operator', 'agent'], 'cancel a turn'));
    return { session_id: request.params.id, ...result };
  });

  app.post('/sessions/:id/continue', { schema: CONTINUE_SCHEMA }, async (request, reply) => {
    const agent = agentOrFail();
    const { turnId, position } = await agent.startTurn(request.params.id, 'continue', commandContext(request, WRITERS, 'continue a session'));
    return reply.status(202).send({ session_id: request.params.id, turn_id: turnId, position, stream: `/sessions/${request.params.id}/stream?after=${position - 1}` });
  });

  done();
};
