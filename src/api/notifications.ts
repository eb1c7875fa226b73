// How the operator's notification channels were told of an approval: per channel and kind, delivered, pending
// (with the next attempt), failed or skipped, with the attempts made and the latest error (src/notify).
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { NotFound } from '../domain/messages.ts';
import { notificationsOfApproval } from '../notify/outbox.ts';
import { CALLER, notFound } from './responses.ts';
import { ApprovalNotification } from './views.ts';

const SCHEMA = {
  summary: "An approval's notifications",
  tags: ['executions'],
  description: 'What each notification channel (NOMOS_NOTIFY) was sent about the approval, and how it went: attempts, the latest error, the next try.',
  params: z.strictObject({ id: z.uuid({ error: 'the id must be a UUID' }) }),
  response: { 200: z.object({ approval_id: z.uuid(), notifications: z.array(ApprovalNotification) }), ...CALLER, ...notFound('No such approval (approval_not_found)') },
};

export const notificationsApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime } = app.nomos;
  app.get('/approvals/:id/notifications', { schema: SCHEMA }, async (request) => {
    const notifications = await notificationsOfApproval(runtime.db, request.params.id);
    if (notifications.length === 0) {
      const { rows } = await runtime.db.query('SELECT 1 FROM approvals WHERE id = $1', [request.params.id]);
      if (rows.length === 0) throw new NotFound('approval', `no approval ${request.params.id}`, 'approval_not_found');
    }
    return { approval_id: request.params.id, notifications };
  });
  done();
};
