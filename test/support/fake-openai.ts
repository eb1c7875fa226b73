// A scripted OpenAI-compatible server on 127.0.0.1 for the LLM adapter and the agent's tests: it speaks the
// chat-completions streaming protocol (server-sent chunks, then [DONE]) so the real openai SDK can talk to it.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ScriptedReply =
  /** Streamed text, split into `chunks` content deltas (default 3). */
  | { content: string; chunks?: number; delayMs?: number }
  /** Tool-call deltas (arguments JSON-stringified and split across several deltas), finish_reason 'tool_calls'. */
  | { toolCalls: Array<{ id?: string; name: string; arguments: unknown }>; content?: string; delayMs?: number }
  /** An HTTP error response with the JSON body {error: {message}}. */
  | { status: number; error?: string }
  /** Sends the first chunk, then stalls until the client goes away or the server closes. */
  | { hangMs: number };

export interface FakeRequest {
  model: string;
  messages: any[];
  tools?: any[];
}

export interface FakeOpenAi {
  /** e.g. http://127.0.0.1:PORT/v1 */
  readonly baseURL: string;
  /** Requests received so far (the parsed JSON bodies), for asserting what context the agent sent. */
  readonly requests: FakeRequest[];
  /** Replies are served in order; when the script runs out, the server answers 500 "script exhausted". */
  script(...replies: ScriptedReply[]): void;
  /** Or a function deciding each reply from the request; index counts the requests since respond() was called. */
  respond(fn: (request: { messages: any[]; tools?: any[] }, index: number) => ScriptedReply): void;
  close(): Promise<void>;
}

const MODEL_FALLBACK = 'fake-model';

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const requests: FakeRequest[] = [];
  let queue: ScriptedReply[] = [];
  let decide: ((request: FakeRequest, index: number) => ScriptedReply) | null = null;
  let decided = 0;
  let served = 0;
  /** Open responses, so close() can end hanging streams instead of waiting for them. */
  const open = new Set<ServerResponse>();

  const nextReply = (request: FakeRequest): ScriptedReply =>
    decide ? decide(request, decided++) : (queue.shift() ?? { status: 500, error: 'script exhausted' });

  const server = createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, `fake server: ${String(error)}`);
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return sendError(res, 404, `no route ${req.method} ${req.url}`);
    if (!/^Bearer \S+/.test(req.headers.authorization ?? '')) return sendError(res, 401, 'missing bearer token');
    let body: any;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return sendError(res, 400, 'body is not JSON');
    }
    if (body?.stream !== true) return sendError(res, 400, 'the fake only streams: send stream: true');
    const request: FakeRequest = { model: body.model, messages: body.messages, ...(body.tools !== undefined && { tools: body.tools }) };
    requests.push(request);
    await serve(res, nextReply(request), typeof body.model === 'string' ? body.model : MODEL_FALLBACK, served++);
  }

  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    script(...replies) {
      decide = null;
      queue = [...replies];
    },
    respond(fn) {
      decide = fn;
      decided = 0;
      queue = [];
    },
    async close() {
      for (const res of open) res.destroy();
      await new Promise<void>((ok, fail) => server.close((error) => (error ? fail(error) : ok())));
    },
  };
}

/** `serial` only makes ids unique across the server's life. */
async function serve(res: ServerResponse, reply: ScriptedReply, model: string, serial: number): Promise<void> {
  if ('status' in reply) return sendError(res, reply.status, reply.error ?? `scripted ${reply.status}`);

  const id = `chatcmpl-fake-${serial}`;
  const created = Math.floor(Date.now() / 1000);
  const send = (delta: Record<string, unknown>, finishReason: string | null = null): void => {
    if (res.destroyed) return; // the client hung up mid-script
    const chunk = { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });

  if ('hangMs' in reply) {
    send({ role: 'assistant', content: '' });
    await sleep(reply.hangMs, res);
    if (!res.destroyed) res.destroy();
    return;
  }

  const delayMs = reply.delayMs ?? 0;
  const pace = async (): Promise<void> => {
    if (delayMs > 0) await sleep(delayMs, res);
  };
  send({ role: 'assistant', content: '' });

  if ('toolCalls' in reply) {
    for (const piece of split(reply.content ?? '', 2)) {
      await pace();
      send({ content: piece });
    }
    for (const [i, call] of reply.toolCalls.entries()) {
      // Like the real API: id, type and name first with empty arguments, then the arguments in pieces.
      await pace();
      send({ tool_calls: [{ index: i, id: call.id ?? `call_fake_${serial}_${i}`, type: 'function', function: { name: call.name, arguments: '' } }] });
      for (const piece of split(JSON.stringify(call.arguments), 3)) {
        await pace();
        send({ tool_calls: [{ index: i, function: { arguments: piece } }] });
      }
    }
    send({}, 'tool_calls');
  } else {
    for (const piece of split(reply.content, reply.chunks ?? 3)) {
      await pace();
      send({ content: piece });
    }
    send({}, 'stop');
  }
  if (res.destroyed) return;
  res.end('data: [DONE]\n\n');
}

function sendError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type: 'fake_error', code: null } }));
}

/** Splits text into at most n non-empty pieces of near-equal length (none for ''). */
function split(text: string, n: number): string[] {
  const chars = [...text];
  const size = Math.max(1, Math.ceil(chars.length / Math.max(1, n)));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return pieces;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((ok, fail) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => ok(Buffer.concat(parts).toString('utf8')));
    req.on('error', fail);
  });
}

/** Waits ms, or less if the client hangs up first. */
function sleep(ms: number, res: ServerResponse): Promise<void> {
  return new Promise((ok) => {
    const timer = setTimeout(done, ms);
    res.once('close', done);
    function done(): void {
      clearTimeout(timer);
      res.off('close', done);
      ok();
    }
  });
}
