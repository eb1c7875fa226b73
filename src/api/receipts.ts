// Receipts of approvals and executions (docs/verifiable-log.md, "Receipts"): the events that matter, each with its
// inclusion path to the latest signed checkpoint, in one JSON file an auditor keeps and checks offline.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { buildReceipt, Receipt, ReceiptNotReady, type ReceiptKind } from '../log/receipts.ts';
import { getApproval, getExecution } from '../projections/executions.ts';
import { IncludeDeleted, deletedProblem, includesDeleted } from './deleted.ts';
import { HttpProblem } from './errors.ts';
import { CALLER, ROLE, notFound, unavailable } from './responses.ts';

const DESCRIPTION =
  "The events that matter (the execution's request with its verdict, the approval's request and decision with its actor, the execution's start and end, and the session's goal and plan as of the request), " +
  "each with its leaf and RFC 9162 inclusion path to one signed checkpoint, the note exactly as signed and the log's public key: `nomos verify receipt FILE --key PEM` checks it offline. " +
  'Until the latest checkpoint covers every one of those events: 503 receipt_not_ready with Retry-After. A deleted session\'s only with include_deleted=true (operators and auditors).';

const schema = (kind: ReceiptKind) => ({
  summary: kind === 'approval' ? "An approval's receipt" : "An execution's receipt",
  tags: ['log'],
  description: DESCRIPTION,
  params: z.strictObject({ id: z.uuid({ error: 'the id must be a UUID' }) }),
  querystring: z.strictObject({ include_deleted: IncludeDeleted }),
  response: {
    200: Receipt,
    ...CALLER,
    ...ROLE,
    ...notFound(`No such ${kind} (${kind}_not_found), or its session was deleted (session_deleted)`),
    ...unavailable('The latest checkpoint does not cover every event of the receipt yet (receipt_not_ready, with Retry-After)'),
  },
});

export const receiptsApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { db, store } = app.nomos.runtime;

  const receipt = async (kind: ReceiptKind, id: string, sessionId: string) => {
    try {
      return await buildReceipt(db, store, { kind, id, sessionId });
    } catch (error) {
      if (error instanceof ReceiptNotReady) throw new HttpProblem(503, 'receipt_not_ready', error.message, { retry_after_seconds: error.retryAfterSeconds });
      throw error;
    }
  };

  app.get('/approvals/:id/receipt', { schema: schema('approval') }, async (request) => {
    const { id } = request.params;
    const approval = await getApproval(db, id);
    if (!approval) throw new HttpProblem(404, 'approval_not_found', `no approval ${id}`);
    if (approval.session_deleted && !includesDeleted(request.query.include_deleted, request.principal.role)) {
      throw deletedProblem(`approval ${id} belongs to a deleted session`, request.principal.role);
    }
    return receipt('approval', id, approval.session_id);
  });

  app.get('/executions/:id/receipt', { schema: schema('execution') }, async (request) => {
    const { id } = request.params;
    const execution = await getExecution(db, id);
    if (!execution) throw new HttpProblem(404, 'execution_not_found', `no execution ${id}`);
    if (execution.session_deleted && !includesDeleted(request.query.include_deleted, request.principal.role)) {
      throw deletedProblem(`execution ${id} belongs to a deleted session`, request.principal.role);
    }
    return receipt('execution', id, execution.session_id);
  });

  done();
};
