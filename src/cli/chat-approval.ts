// The terminal chat's approval prompt: it shows the rule that asked, the classifier's reason and the time left;
// takes only a typed answer (Enter alone asks again); and, while it waits, follows the change feed so that an
// approval decided elsewhere (the console, another terminal, an expiry) drops the prompt and says by whom.
import { type ApprovalRow, answerLater, readApproval, reasonOf, ruleOf, timeLeft } from './approvals.ts';
import { changePositions } from './chat-sse.ts';
import type { ApprovalAsk } from './chat-turn.ts';
import type { ServerClient } from './server-client.ts';

export type PromptAnswer =
  | { kind: 'approve' }
  | { kind: 'deny'; reason: string }
  /** The operator left the prompt (Ctrl-C, Ctrl-D, the end of the input): the approval is still pending. */
  | { kind: 'left' }
  /** Someone or something else decided it first: `row` says how and who. */
  | { kind: 'decided'; row: ApprovalRow };

/** Asks `question` on the terminal: the line typed, or null once the input is closed or `signal` aborts the question. */
export type Ask = (question: string, signal: AbortSignal) => Promise<string | null>;

/** An approval decided by someone other than this prompt, in words: "approved by operator:alice in another client". */
export function decidedElsewhere(a: ApprovalRow): string {
  const by = a.decided_by ? ` by ${a.decided_by.role}:${a.decided_by.id}` : '';
  const why = a.decision_reason ? `: ${a.decision_reason}` : '';
  switch (a.status) {
    case 'granted':
      return `approved${by} in another client`;
    case 'denied':
      return `denied${by} in another client${why}`;
    case 'expired':
      return 'expired unanswered; nothing ran';
    case 'cancelled':
      return `cancelled${by}${why}; nothing ran`;
    default:
      return a.status;
  }
}

/** What leaving the prompt leaves behind, and how to answer it later. */
export const stillPending = (a: ApprovalAsk, row: ApprovalRow | null): string =>
  `approval ${a.approval_id} is still pending${row ? ` (expires in ${timeLeft(row.expires_at)})` : ''}: ${answerLater(a.approval_id)}`;

/**
 * Asks the operator about one approval until they answer y, n or a reason to deny, leave the prompt, or the
 * approval is decided elsewhere. The answer is not sent: the caller does that. `row` is what the read models said
 * when the prompt opened (null when they could not be read: the prompt then asks with what the stream said).
 */
export async function promptApproval(client: ServerClient, a: ApprovalAsk, ask: Ask, out: (text: string) => void): Promise<{ answer: PromptAnswer; row: ApprovalRow | null }> {
  const row = await readApproval(client, a.session_id, a.approval_id, a.position).catch(() => null);
  if (row !== null && row.status !== 'pending') return { answer: { kind: 'decided', row }, row };
  if (row !== null) out(`    rule ${ruleOf(row)}${reasonOf(row) ? ` · ${reasonOf(row)}` : ''}\n`);

  const watching = new AbortController();
  const seen: { decided: ApprovalRow | null } = { decided: null };
  // Each move of the read models (or, against a server without the feed, each pause) reads the approval again.
  const watcher = (async () => {
    for await (const position of changePositions(client, watching.signal)) {
      const now = await readApproval(client, a.session_id, a.approval_id, position ?? a.position).catch(() => null);
      if (now !== null && now.status !== 'pending') {
        seen.decided = now;
        watching.abort();
        return;
      }
    }
  })().catch(() => undefined);

  try {
    let hinted = false;
    for (;;) {
      const left = row ? ` (expires in ${timeLeft(row.expires_at)})` : '';
      const line = await ask(`approve "${a.command}" on ${a.target}?${left} [y/n, or a reason to deny] `, watching.signal);
      if (seen.decided !== null) return { answer: { kind: 'decided', row: seen.decided }, row };
      if (line === null) return { answer: { kind: 'left' }, row };
      const answer = line.trim();
      if (/^y(es)?$/i.test(answer)) return { answer: { kind: 'approve' }, row };
      if (/^n(o)?$/i.test(answer)) return { answer: { kind: 'deny', reason: 'denied in the terminal' }, row };
      if (answer !== '') return { answer: { kind: 'deny', reason: answer }, row };
      // Enter alone decides nothing: a command runs, or is refused, only on a typed answer.
      if (!hinted) out('  (type y to approve, n or a reason to deny; Enter alone decides nothing)\n');
      hinted = true;
    }
  } finally {
    watching.abort();
    await watcher;
  }
}
