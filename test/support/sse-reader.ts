// Reads a text/event-stream response the way a chat client does: `id:` and `data:` lines into messages.
export interface SseMessage {
  id: number | null;
  type: string;
  session_id: string;
  data: any;
}

/** Reads messages until `stop` says so (the message is included) or the stream ends; then cancels the body. */
export async function readSse(response: Response, stop: (message: SseMessage, all: SseMessage[]) => boolean = () => false, timeoutMs = 20_000): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (Date.now() > deadline) throw new Error(`SSE read timed out after ${messages.length} messages: ${JSON.stringify(messages.map((m) => m.type))}`);
      const { done, value } = await reader.read();
      if (done) return messages;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let id: number | null = null;
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) id = Number(line.slice(4));
          if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (data === '') continue; // a comment (keep-alive)
        const parsed = JSON.parse(data) as Omit<SseMessage, 'id'>;
        const message = { id, ...parsed };
        messages.push(message);
        if (stop(message, messages)) return messages;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
