// POST /sessions/:id/redactions: an operator redacts a secret that ended up in one of a session's events (a
// command's output, a message). The payload is replaced by a redacted copy, PayloadRedacted records who, when and
// why (never the secret), the read models are redacted alike, and every proof over the event's leaf still holds.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { redactPayload } from '../commands/redact.ts';
import { MIN_SECRET, REDACTED_MARK } from '../domain/log/redaction.ts';
import { commandContext } from './context.ts';
import { BODY, WRITE, notFound } from './responses.ts';

/** The projections whose rows are folded from a session's own events: the rows a redaction must reach. */
const SESSION_PROJECTIONS = new Set(['sessions', 'transcript', 'plans', 'executions', 'model_calls']);

const SCHEMA = {
  summary: "Redact a secret from one of a session's events (operators)",
  tags: ['log'],
  description: `Every occurrence of \`text\` (at least ${MIN_SECRET} characters) in the event's payload, and in the session's read-model rows, becomes ${REDACTED_MARK}. PayloadRedacted records who, when, why and the SHA-256 of the payload before, never the text: the event's sealed leaf commits to that hash, so its proofs still verify, and \`nomos verify\` reports the redaction as such.`,
  params: z.strictObject({ id: z.uuid({ error: 'the session id must be a UUID' }) }),
  body: z.strictObject({
    position: z.number().int().positive().describe("the event's global position"),
    text: z.string().min(MIN_SECRET).max(100_000).describe('the secret, exactly as it stands in the payload'),
    reason: z.string().trim().min(1).max(2_000),
  }),
  response: {
    201: z.object({ session_id: z.string(), position: z.number().int(), redaction_position: z.number().int(), occurrences: z.number().int(), data_sha256: z.string(), read_model_rows: z.record(z.string(), z.number().int()) }),
    ...WRITE,
    ...BODY,
    ...notFound('No event at that position in the session (event_not_in_session)'),
  },
};

export const redactionsApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime } = app.nomos;
  const tables = runtime.projections.filter((p) => SESSION_PROJECTIONS.has(p.name)).flatMap((p) => p.tables);
  app.post('/sessions/:id/redactions', { schema: SCHEMA }, async (request, reply) => {
    const ctx = commandContext(request, ['operator'], 'redact a payload');
    const { position, text, reason } = request.body;
    const done = await redactPayload(runtime.commandDeps, runtime.db, tables, ctx, { sessionId: request.params.id, position, text, reason });
    return reply.code(201).send({ session_id: request.params.id, position, redaction_position: done.redactionPosition, occurrences: done.occurrences, data_sha256: done.dataSha256, read_model_rows: done.rows });
  });
  done();
};
