// `nomos chat --session ID` starts where the session stands: its last messages (user and assistant texts, a
// line per tool call with its result drawn) from GET /sessions/:id, and the approvals it still waits on.
import { z } from 'zod';
import { drawToolResult, short } from './chat-draw.ts';
import type { ApprovalAsk } from './chat-turn.ts';
import type { ServerClient } from './server-client.ts';

export const HISTORY_ENTRIES = 10;

const SessionView = z.object({
  session: z.object({ title: z.string().nullish(), status: z.string().optional(), outcome: z.string().nullish() }),
  messages: z.array(
    z.object({
      role: z.string(),
      content: z.object({
        text: z.string().nullable(),
        tool_calls: z.array(z.object({ name: z.string(), args: z.unknown(), result: z.unknown(), error: z.string().nullable(), status: z.string() })),
      }),
    }),
  ),
  as_of_position: z.number(),
});

const PendingApprovals = z.object({
  approvals: z.array(z.object({ id: z.string(), session_id: z.string(), execution_id: z.string(), command: z.string(), target: z.string(), risk_class: z.string() })),
});

export type SessionView = z.infer<typeof SessionView>;

/** The session's headline and its last `limit` entries: a user text, an assistant text, or one tool call. */
export function historyLines(sessionId: string, view: SessionView, limit = HISTORY_ENTRIES): string[] {
  const entries: string[] = [];
  for (const message of view.messages) {
    if (message.role === 'user') {
      if (message.content.text !== null) entries.push(`you> ${short(message.content.text, 300)}`);
      continue;
    }
    // An assistant message holds its turn's tool calls, then the turn's final text.
    for (const call of message.content.tool_calls) {
      const result = call.status === 'requested' ? '… no result yet' : (drawToolResult(call.name, call.result, call.error)[0] ?? '');
      entries.push(`  → ${call.name} ${short(call.args, 80)}  ${result}`);
    }
    if (message.content.text !== null && message.content.text !== '') entries.push(`nomos> ${message.content.text}`);
  }
  const { title, status, outcome } = view.session;
  const head = `session ${sessionId}${title ? ` · ${title}` : ''}${status ? ` · ${status}` : ''}${outcome ? ` (${outcome})` : ''}`;
  const earlier = entries.length - limit;
  if (entries.length === 0) return [head, '  (no messages yet)'];
  return [head, ...(earlier > 0 ? [`  … ${earlier} earlier (GET /sessions/${sessionId} has them all)`] : []), ...entries.slice(-limit)];
}

/** Prints the session's last messages; returns the position they reflect and the approvals still pending. */
export async function showHistory(client: ServerClient, sessionId: string, out: (text: string) => void): Promise<{ position: number; pending: ApprovalAsk[] }> {
  const view = await client.request('GET', `/sessions/${sessionId}`, { schema: SessionView, what: `session ${sessionId}` });
  for (const line of historyLines(sessionId, view)) out(`${line}\n`);
  const { approvals } = await client.request('GET', `/approvals?status=pending&limit=500&min_position=${view.as_of_position}`, { schema: PendingApprovals, what: 'the pending approvals' });
  const pending = approvals
    .filter((a) => a.session_id === sessionId)
    .map((a) => ({ approval_id: a.id, session_id: a.session_id, execution_id: a.execution_id, command: a.command, target: a.target, risk_class: a.risk_class, position: view.as_of_position }));
  for (const a of pending) out(`  ⏸ approval needed: ${a.command} on ${a.target} (${a.risk_class})\n`);
  return { position: view.as_of_position, pending };
}
