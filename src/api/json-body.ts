// The JSON body parser of every route: Fastify's own (prototype poisoning refused), then one look over the
// parsed value, before any schema sees it, for what no route can take: text that PostgreSQL's jsonb refuses
// (a lone UTF-16 surrogate, "\ud800" in JSON) and nesting deep enough to overflow a validator's stack.
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

/** Replaces Fastify's application/json parser with the same parser followed by unacceptableJson. */
export function registerJsonBody(app: FastifyInstance): void {
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
