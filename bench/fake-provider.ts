// The least an OpenAI-compatible server can do, on 127.0.0.1 in the bench's process: read and parse the request,
// then stream a short reply (a few content deltas, the finish, a usage chunk, [DONE]) at once. A model call timed
// against it is the floor of one: the client's and the wire's share, without the provider's inference. (The tests'
// scripted server, test/support/fake-openai.ts, also counts every prompt's tokens, which would add to that floor.)
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const REPLY = ['The mount', ' is back;', ' the backup ran.'];

export interface FakeProvider {
  /** e.g. http://127.0.0.1:PORT/v1 */
  readonly baseURL: string;
  close(): Promise<void>;
}

export async function startFakeProvider(): Promise<FakeProvider> {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error', param: null, code: null } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { model: string };
      const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model };
      const chunk = (choices: unknown[], usage: unknown = null) => `data: ${JSON.stringify({ ...base, choices, usage })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]));
      for (const text of REPLY) res.write(chunk([{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }]));
      res.write(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]));
      // Usage as OpenAI reports it, on a last chunk without choices; the prompt is not counted here (see above).
      res.write(chunk([], { prompt_tokens: 0, completion_tokens: REPLY.length, total_tokens: REPLY.length }));
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
