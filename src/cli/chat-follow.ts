// What `nomos chat` does after the operator decided: follow a pending execution until it ends (GET
// /executions/:id), and follow the session's stream until the agent's next turn is done — or, when no turn
// starts within a bounded wait (no model, the session closed, nothing to carry on), say so and return.
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { ExecutionRow, type Outcome, drawOutcome, outcomeOfExecution } from './chat-draw.ts';
import { sseMessages } from './chat-sse.ts';
import type { TurnPrinter } from './chat-turn.ts';
import { type ServerClient, ServerRefused } from './server-client.ts';

const POLL_MS = 1_000;
/** How often a long run says it is still running, with the last line it printed. */
const PROGRESS_EVERY_MS = 15_000;
const STILL_RUNNING = new Set(['requested', 'approved', 'running', 'hung', 'pending']);
/** A stream that ends without its `done` (a server restarting) is opened again this many times. */
const RESUME_ATTEMPTS = 3;

const Events = z.object({ events: z.array(z.object({ type: z.string(), position: z.number() })), next_cursor: z.string().nullable().optional() });

/**
 * Polls an execution until it has ended and returns how it ended; null when `signal` stops the wait first.
 * `minPosition` is the position of the answer that said it was pending, so the read model is at least there.
 */
export async function settleExecution(client: ServerClient, executionId: string, minPosition: number, out: (text: string) => void, signal: AbortSignal): Promise<Outcome | null> {
  const began = Date.now();
  let told = began;
  let hungTold = false;
  try {
    for (;;) {
      const row = await client.request('GET', `/executions/${executionId}?min_position=${minPosition}`, { schema: ExecutionRow, what: `execution ${executionId}` });
      const outcome = outcomeOfExecution(row);
      if (!STILL_RUNNING.has(row.status)) return outcome;
      if (row.status === 'hung' && !hungTold) {
        hungTold = true;
        for (const line of drawOutcome(outcome)) out(`  ${line}\n`);
      } else if (Date.now() - told >= PROGRESS_EVERY_MS) {
        told = Date.now();
        const last = (row.stdout_so_far ?? '').trimEnd().split('\n').at(-1) ?? '';
        out(`  … still running (${Math.round((told - began) / 1000)} s)${last ? `: ${last.slice(0, 120)}` : ''}\n`);
      }
      await sleep(POLL_MS, undefined, { signal });
    }
  } catch (error) {
    if (signal.aborted) return null;
    throw error;
  }
}

export type FollowEnd = 'done' | 'no_turn' | 'interrupted';

export interface FollowOptions {
  /** Stream from after this position (the last one shown). */
  after: number;
  /** Stop at the first `done` past this position (the operator's decision): the turn that came of it. */
  since: number;
  /** How long a turn may take to start before the follow gives up; null when a turn is known to be running. */
  waitMs: number | null;
  signal: AbortSignal;
}

/**
 * Prints the session's stream through `printer` until a turn that started after `since` is done. Whether a
 * turn started is read from the session's events when the wait is up: a slow model's first token may come
 * late, but its TurnStarted is there at once. Throws when the stream cannot be opened again after it ended.
 */
export async function followSession(client: ServerClient, sessionId: string, printer: TurnPrinter, options: FollowOptions): Promise<FollowEnd> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal.addEventListener('abort', onAbort, { once: true });
  let noTurn = false;
  const timer =
    options.waitMs === null
      ? null
      : setTimeout(() => {
          void turnStartedAfter(client, sessionId, options.since).then((started) => {
            if (started) return;
            noTurn = true;
            stop.abort();
          });
        }, options.waitMs);
  try {
    let after = options.after;
    let failures = 0;
    for (;;) {
      let why: unknown = new Error('the server ended the session stream before the turn was done');
      try {
        const response = await client.stream('GET', `/sessions/${sessionId}/stream?after=${after}`, { what: 'the session stream', signal: stop.signal });
        if (!response.body) throw new Error('the session stream has no body');
        for await (const m of sseMessages(response.body)) {
          failures = 0;
          printer.show(m);
          if (m.id === null) continue;
          after = m.id;
          if (m.type === 'done' && m.id > options.since) return 'done';
        }
      } catch (error) {
        if (error instanceof ServerRefused && !stop.signal.aborted) throw error; // the session is gone, or this token may not read it
        why = error;
      }
      if (stop.signal.aborted) return noTurn ? 'no_turn' : 'interrupted';
      // The stream ended without the turn's done (a server restarting): resume after the last id seen.
      if (++failures > RESUME_ATTEMPTS) throw why;
      await sleep(POLL_MS, undefined, { signal: stop.signal }).catch(() => undefined);
    }
  } finally {
    if (timer !== null) clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
    stop.abort();
    printer.endLine();
  }
}

async function turnStartedAfter(client: ServerClient, sessionId: string, position: number): Promise<boolean> {
  try {
    // Page by page (the server answers a long session in pages), until the turn is found or the pages end.
    for (let cursor: string | null | undefined = null; ; ) {
      const path: string = `/sessions/${sessionId}/events${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page: z.infer<typeof Events> = await client.request('GET', path, { schema: Events, what: `the events of session ${sessionId}` });
      if (page.events.some((e) => e.type === 'TurnStarted' && e.position > position)) return true;
      cursor = page.next_cursor;
      if (!cursor) return false;
    }
  } catch {
    return false; // the server cannot tell: the bounded wait is up all the same
  }
}
