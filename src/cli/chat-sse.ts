// The chat client's reading of a session's event stream (POST /chat, GET /sessions/:id/stream): Server-Sent
// Events into messages, each with the id (a global position) it was sent with, parsed rather than trusted.
import { z } from 'zod';

export interface StreamMessage {
  /** The event's global position; null for a token delta, which is never stored. */
  id: number | null;
  type: string;
  session_id: string;
  data: Record<string, unknown>;
}

const Payload = z.object({ type: z.string(), session_id: z.string(), data: z.record(z.string(), z.unknown()) });

/** The messages of an event stream as they arrive; ends with the stream. Comments (keep-alives) are skipped. */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const message = parseBlock(block);
      if (message) yield message;
    }
  }
}

function parseBlock(block: string): StreamMessage | null {
  let id: number | null = null;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('id: ')) id = /^\d+$/.test(line.slice(4)) ? Number(line.slice(4)) : null;
    else if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  if (data.length === 0) return null;
  let json: unknown;
  try {
    json = JSON.parse(data.join('\n'));
  } catch {
    throw new Error(`the server sent an event this client cannot read: ${data.join('\n').slice(0, 200)}`);
  }
  const payload = Payload.safeParse(json);
  if (!payload.success) throw new Error(`the server sent an event this client cannot read: ${data.join('\n').slice(0, 200)}`);
  return { id, ...payload.data };
}
