// Chatting with the agent: POST /chat posts the message, starts a turn and streams it back as SSE until the
// turn is done; POST /sessions/:id/cancel stops a running turn; POST /sessions/:id/continue starts one by hand.
// With no model provider configured these answer 503 saying what to set; the rest of the API works on.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { executeSessionCommand, startSession } from '../commands/session.ts';
import { commandContext } from './context.ts';
import { HttpProblem } from './errors.ts';
import { openSse, streamSession } from './sse.ts';

const Id = z.strictObject({ id: z.uuid({ error: 'session id must be a UUID' }) });
const WRITERS = ['operator', 'agent'] as const;

export const chatApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime } = app.nomos;
  const agentOrFail = () => {
    if (!runtime.agent) {
      throw new HttpProblem(503, 'no_model_provider', 'no model provider is configured: set OPENAI_BASE_URL (any OpenAI-compatible server) and OPENAI_API_KEY, and NOMOS_MODEL; the rest of the API works without them');
    }
    return runtime.agent;
  };

  app.post('/chat', { schema: { body: z.strictObject({ session_id: z.uuid().optional(), message: z.string().trim().min(1).max(100_000) }) } }, async (request, reply) => {
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

  app.post('/sessions/:id/cancel', { schema: { params: Id, body: z.strictObject({}).nullish() } }, async (request) => {
    const agent = agentOrFail();
    const result = await agent.cancel(request.params.id, commandContext(request, ['operator', 'agent'], 'cancel a turn'));
    return { session_id: request.params.id, ...result };
  });

  app.post('/sessions/:id/continue', { schema: { params: Id, body: z.strictObject({}).nullish() } }, async (request, reply) => {
    const agent = agentOrFail();
    const { turnId, position } = await agent.startTurn(request.params.id, 'continue', commandContext(request, WRITERS, 'continue a session'));
    return reply.status(202).send({ session_id: request.params.id, turn_id: turnId, position, stream: `/sessions/${request.params.id}/stream?after=${position - 1}` });
  });

  done();
};
