// `nomos chat [--session ID]`: a terminal chat client. Streams each turn (tokens as they come, a line per tool
// call, its result drawn as it ended), and when a command needs approval asks the operator inline (the prompt:
// chat-approval.ts); after the decision it shows how the execution ended and the agent's continuation. Ctrl-C
// stops watching, not the agent.
import { createInterface } from 'node:readline/promises';
import { z } from 'zod';
import { APPROVE_TIMEOUT_MS, readApproval } from './approvals.ts';
import { decidedElsewhere, promptApproval, stillPending } from './chat-approval.ts';
import { RunReply, drawOutcome, outcomeOfRun } from './chat-draw.ts';
import { followSession, settleExecution } from './chat-follow.ts';
import { showHistory } from './chat-history.ts';
import { sseMessages } from './chat-sse.ts';
import { type ApprovalAsk, TurnPrinter } from './chat-turn.ts';
import { type ServerClient, ServerRefused, serverClient } from './server-client.ts';

const Approved = z.object({ position: z.number(), execution: RunReply.extend({ position: z.number() }) });
const Denied = z.object({ position: z.number() });

export interface ChatOptions {
  session?: string;
  continuationWait: number;
}

/** `nomos chat`'s action: a chat with the server at NOMOS_URL until the operator leaves. */
export const chatAction = (options: ChatOptions): Promise<void> => chat(serverClient(process.env), options);

async function chat(client: ServerClient, options: ChatOptions): Promise<void> {
  const out = (text: string) => void process.stdout.write(text);
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY });
  // null once the input is closed (Ctrl-C or Ctrl-D at a prompt, the end of a piped input) or `signal` withdraws the
  // question; watched here, since a pending question is not always settled when the interface closes.
  let closed = false;
  rl.once('close', () => (closed = true));
  const ask = (question: string, signal?: AbortSignal) =>
    new Promise<string | null>((resolve) => {
      if (closed) return resolve(null);
      const onClose = () => resolve(null);
      rl.once('close', onClose);
      rl.question(question, signal ? { signal } : {})
        .then(resolve, () => resolve(null))
        .finally(() => rl.off('close', onClose));
    });
  // What Ctrl-C stops: the stream or wait in progress, else the chat itself.
  let watching: AbortController | null = null;
  rl.on('SIGINT', () => (watching ? watching.abort() : rl.close()));
  const watch = async <T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const controller = new AbortController();
    watching = controller;
    try {
      return await work(controller.signal);
    } finally {
      watching = null;
    }
  };
  const printer = new TurnPrinter(out);
  let sessionId = options.session;

  /** Approves and shows how the execution ended; returns the decision's position, or null if it was refused. */
  const approve = async (a: ApprovalAsk): Promise<number | null> => {
    out('  approving…\n');
    const reply = await client.request('POST', `/approvals/${a.approval_id}/approve`, { body: {}, schema: Approved, what: `approval ${a.approval_id}`, timeoutMs: APPROVE_TIMEOUT_MS });
    out(`  approved: ${a.command} on ${a.target}\n`);
    let outcome = outcomeOfRun(reply.execution);
    if (outcome.status === 'pending') {
      for (const line of drawOutcome(outcome)) out(`  ${line}\n`);
      const settled = await watch((signal) => settleExecution(client, a.execution_id, reply.execution.position, out, signal));
      if (settled === null) {
        out(`  (stopped waiting; GET /executions/${a.execution_id} shows how it ends)\n`);
        return reply.position;
      }
      outcome = settled;
    }
    for (const line of drawOutcome(outcome)) out(`  ${line}\n`);
    return reply.position;
  };

  const deny = async (a: ApprovalAsk, reason: string): Promise<number> => {
    const reply = await client.request('POST', `/approvals/${a.approval_id}/deny`, { body: { reason }, schema: Denied, what: `approval ${a.approval_id}` });
    out(`  denied: ${reason}\n`);
    return reply.position;
  };

  /** Asks for each approval, then follows what the agent does next; its turn may ask for more. */
  const decide = async (first: ApprovalAsk[]): Promise<void> => {
    for (let approvals = first; approvals.length > 0; approvals = printer.takeApprovals()) {
      let since: number | null = null;
      for (const a of approvals) {
        const { answer, row } = await promptApproval(client, a, ask, out);
        if (answer.kind === 'left') {
          out(`\n  ${stillPending(a, row)}\n`);
          continue;
        }
        if (answer.kind === 'decided') {
          out(`\n  "${a.command}" on ${a.target}: ${decidedElsewhere(answer.row)} (no longer asking)\n`);
          // The agent may carry on from it as from a decision made here.
          since ??= printer.lastId ?? a.position;
          continue;
        }
        const yes = answer.kind === 'approve';
        try {
          since = (yes ? await approve(a) : await deny(a, answer.reason)) ?? since;
        } catch (error) {
          if (!(error instanceof ServerRefused)) throw error;
          // Decided elsewhere between the answer and its arrival: say by whom rather than only that it was refused.
          const now = error.code === 'approval_decided' ? await readApproval(client, a.session_id, a.approval_id, a.position).catch(() => null) : null;
          out(now ? `  could not ${yes ? 'approve' : 'deny'}: already ${decidedElsewhere(now)}\n` : `  could not ${yes ? 'approve' : 'deny'}: ${error.detail}\n`);
        }
      }
      if (since === null || sessionId === undefined) return;
      await carryOn(sessionId, since);
    }
  };

  const carryOn = async (session: string, since: number): Promise<void> => {
    const waitS = options.continuationWait;
    out(`  (waiting up to ${waitS} s for the agent to carry on; Ctrl-C stops waiting)\n`);
    try {
      const end = await watch((signal) => followSession(client, session, printer, { after: Math.min(printer.lastId ?? since, since), since, waitMs: waitS * 1000, signal }));
      switch (end) {
        case 'done':
          break;
        case 'no_turn':
          out(`  (the agent did not carry on within ${waitS} s: it goes on when you write, or when a command it waits on ends)\n`);
          break;
        case 'interrupted':
          out(`  (stopped following; nomos chat --session ${session} shows what the agent did)\n`);
          break;
        default: {
          const unhandled: never = end;
          throw new Error(`unhandled end of a follow: ${String(unhandled)}`);
        }
      }
    } catch (error) {
      out(`  ! could not follow the session: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  };

  /** Streams the turn a message started, until its done. */
  const send = async (message: string): Promise<void> => {
    const body = { message, ...(sessionId && { session_id: sessionId }) };
    const end = await watch(async (signal) => {
      try {
        const response = await client.stream('POST', '/chat', { body, what: 'the message', signal });
        if (!response.body) return 'ended';
        for await (const m of sseMessages(response.body)) {
          sessionId = m.session_id;
          printer.show(m);
          if (m.type === 'done') return 'done';
        }
        return 'ended';
      } catch (error) {
        if (signal.aborted) return 'interrupted';
        throw error;
      } finally {
        printer.endLine();
      }
    });
    const where = sessionId ? `nomos chat --session ${sessionId}` : 'GET /sessions';
    if (end === 'interrupted') out(`  (stopped watching; the turn goes on on the server, POST /sessions/:id/cancel stops it; ${where} shows it)\n`);
    if (end === 'ended') out(`  (the stream ended before the turn was done; ${where} shows what followed)\n`);
  };

  try {
    if (sessionId !== undefined) {
      const { position, pending } = await showHistory(client, sessionId, out);
      printer.lastId = position;
      await decide(pending);
    }
    for (;;) {
      const line = await ask('you> ');
      if (line === null) break;
      const message = line.trim();
      if (message === '') continue;
      if (message === '/quit' || message === '/exit') break;
      try {
        await send(message);
      } catch (error) {
        if (!(error instanceof ServerRefused)) throw error;
        out(`error ${error.status}: ${error.detail}\n`);
        continue;
      }
      await decide(printer.takeApprovals());
    }
  } finally {
    rl.close();
  }
}
