// The JSON body parser of every route: Fastify's own (prototype poisoning refused), then one look over the
// parsed value, before any schema sees it, for what no route can take: text that PostgreSQL's jsonb refuses
// (a lone UTF-16 surrogate, "\ud800" in JSON) and nesting deep enough to overflow a validator's stack. A body
// over the limit is read off the socket (a bounded amount) before the 413 goes out, so the client can read it.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { HttpProblem } from './errors.ts';

/** Far deeper than any command needs (the domain's own limits are lower); shallow enough for any recursive check. */
export const MAX_BODY_DEPTH = 64;

/** With the u flag a surrogate pair reads as one code point, so this matches only a surrogate without its pair. */
const LONE_SURROGATE = /\p{Cs}/u;

// A path is built only for the one value refused, from parent links: a large body's walk makes no strings.
interface Node {
  readonly value: unknown;
  readonly parent: Node | null;
  readonly key: string | number | null;
  readonly depth: number;
}

/** Shown segments of a path that nests too deep: the rest repeats what a reader has already seen. */
const SHOWN_SEGMENTS = 8;

function pathOf(node: Node, limit = Number.POSITIVE_INFINITY): string {
  const keys: Array<string | number> = [];
  for (let n: Node | null = node; n !== null && n.key !== null; n = n.parent) keys.push(n.key);
  keys.reverse();
  const shown = keys.slice(0, limit).map((key) => (typeof key === 'number' ? `[${key}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`));
  return `body${shown.join('')}${keys.length > limit ? '…' : ''}`;
}

/** The first value of `body` that no route could store or check, as a 400; null when there is none. */
export function unacceptableJson(body: unknown): HttpProblem | null {
  const stack: Node[] = [{ value: body, parent: null, key: null, depth: 1 }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const { value } = node;
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return surrogate(pathOf(node), 'holds');
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (node.depth > MAX_BODY_DEPTH) {
      const field = pathOf(node, SHOWN_SEGMENTS);
      const message = `nests deeper than ${MAX_BODY_DEPTH} levels, the limit for a request body`;
      return new HttpProblem(400, 'body_too_deep', `${field}: ${message}`, { errors: [{ field, message }], max_depth: MAX_BODY_DEPTH });
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i] as unknown, parent: node, key: i, depth: node.depth + 1 });
      continue;
    }
    const entries = Object.entries(value as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const childNode: Node = { value: child, parent: node, key, depth: node.depth + 1 };
      if (LONE_SURROGATE.test(key)) return surrogate(pathOf(childNode), 'has a key that holds');
      stack.push(childNode);
    }
  }
  return null;
}

function surrogate(field: string, what: string): HttpProblem {
  const message = `${what} a lone UTF-16 surrogate (such as \\ud800 without its pair): that is not Unicode text and cannot be stored; send well-formed UTF-8 or a paired escape`;
  return new HttpProblem(400, 'invalid_text', `${field}: ${message}`, { errors: [{ field, message }] });
}

/**
 * How much of a refused body is read and dropped before the 413 is sent, and for how long at most. A client
 * still writing its body when the server answers and closes gets EPIPE or a reset instead of the answer (Node's
 * fetch rejects with "fetch failed"); past these bounds it does, rather than have one request hold a socket
 * for as long as it likes to send.
 */
export const DRAIN_MAX_BYTES = 32 * 1024 * 1024;
export const DRAIN_MAX_MS = 10_000;

/** Reads and drops what is left of a request body, up to the bounds; resolves at its end or at a bound. */
function drain(raw: IncomingMessage, bounds: { maxBytes: number; maxMs: number }): Promise<void> {
  if (raw.complete || raw.readableEnded || raw.destroyed) return Promise.resolve();
  // Announced larger than the bound: the client cannot be answered cleanly, so it is not waited on.
  if (Number(raw.headers['content-length']) > bounds.maxBytes) return Promise.resolve();
  return new Promise<void>((resolve) => {
    let read = 0;
    const stop = () => {
      clearTimeout(timer);
      raw.off('data', count);
      raw.off('end', stop);
      raw.off('close', stop);
      raw.off('error', stop);
      resolve();
    };
    const count = (chunk: Buffer) => {
      read += chunk.length;
      if (read > bounds.maxBytes) stop();
    };
    const timer = setTimeout(stop, bounds.maxMs);
    raw.on('data', count);
    raw.once('end', stop);
    raw.once('close', stop);
    raw.once('error', stop);
    raw.resume();
  });
}

/** Replaces Fastify's application/json parser with the same parser followed by unacceptableJson. */
export function registerJsonBody(app: FastifyInstance, bounds = { maxBytes: DRAIN_MAX_BYTES, maxMs: DRAIN_MAX_MS }): void {
  // Fastify answers 413 (with Connection: close) as soon as it knows, which may be before the body has arrived.
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode === 413) await drain(request.raw, bounds);
    return payload;
  });
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    void parse(request, typeof text === 'string' ? text : text.toString('utf8'), (error: Error | null, body?: unknown) => {
      if (error) {
        done(error, undefined);
        return;
      }
      const problem = unacceptableJson(body);
      if (problem) done(problem, undefined);
      else done(null, body);
    });
  });
}
