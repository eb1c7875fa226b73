// The chat client's reading of Server-Sent Events: a session's stream (POST /chat, GET /sessions/:id/stream) into
// messages, each with the id (a global position) it was sent with, parsed rather than trusted; and the change
// feed (GET /changes) into the positions the read models reached, which `nomos approvals watch` and the chat's
// approval prompt follow to learn of an approval decided elsewhere.
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { type ServerClient, ServerRefused } from './server-client.ts';

export interface StreamMessage {
  /** The event's global position; null for a token delta, which is never stored. */
  id: number | null;
  type: string;
  session_id: string;
  data: Record<string, unknown>;
}

const Payload = z.object({ type: z.string(), session_id: z.string(), data: z.record(z.string(), z.unknown()) });
const Change = z.object({ position: z.number().int() });

/** How long the change feed waits before it is opened again after it ended or could not be opened. */
const REOPEN_MS = 2_000;

/** The raw events of a stream (`data:` lines joined) as they arrive; comments (keep-alives) are skipped. */
async function* sseBlocks(body: ReadableStream<Uint8Array>): AsyncGenerator<{ id: string | null; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let id: string | null = null;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) yield { id, data: data.join('\n') };
    }
  }
}

/** The messages of an event stream as they arrive; ends with the stream. Comments (keep-alives) are skipped. */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamMessage> {
  for await (const block of sseBlocks(body)) yield parseMessage(block.id, block.data);
}

function parseMessage(rawId: string | null, data: string): StreamMessage {
  const id = rawId !== null && /^\d+$/.test(rawId) ? Number(rawId) : null;
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    throw new Error(`the server sent an event this client cannot read: ${data.slice(0, 200)}`);
  }
  const payload = Payload.safeParse(json);
  if (!payload.success) throw new Error(`the server sent an event this client cannot read: ${data.slice(0, 200)}`);
  return { id, ...payload.data };
}

/**
 * The positions the read models reach (GET /changes), from the first as the feed opens, until `signal` ends it.
 * A feed that ends or cannot be opened (a server restarting, unreachable) is opened again after a pause, and
 * `onTrouble` is told why; a server that refuses the feed (an older one) is polled instead: a null each pause.
 */
export async function* changePositions(client: ServerClient, signal: AbortSignal, onTrouble: (why: string) => void = () => undefined): AsyncGenerator<number | null> {
  let polling = false;
  while (!signal.aborted) {
    if (polling) {
      yield null;
    } else {
      try {
        const response = await client.stream('GET', '/changes', { what: 'the change feed', signal });
        if (response.body) {
          for await (const block of sseBlocks(response.body)) {
            const change = Change.safeParse(safeJson(block.data));
            if (change.success) yield change.data.position;
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ServerRefused) polling = true;
        else onTrouble(error instanceof Error ? error.message : String(error));
      }
    }
    await sleep(REOPEN_MS, undefined, { signal }).catch(() => undefined);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
