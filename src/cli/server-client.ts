// How the CLI talks to a running server: NOMOS_URL (default loopback :8092) and NOMOS_TOKEN, and one way of
// reporting an unreachable server or a refused request (with the server's problem code and detail).
import { z } from 'zod';

import { DEFAULT_URL } from './catalog.ts';

export { DEFAULT_URL };

const Problem = z.object({ code: z.string().optional(), detail: z.string().optional() });

/** The server answered, and refused: a caller may report it and go on, where an unreachable server ends the command. */
export class ServerRefused extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
    readonly detail: string,
  ) {
    super(message);
  }
}

export interface ServerClient {
  readonly base: string;
  readonly headers: Record<string, string>;
  /** Sends a request and parses the JSON answer with `schema`; throws a readable Error on any failure. */
  request<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options: RequestOptions<T>): Promise<T>;
  /**
   * request, in two steps: resolves once the answer's headers have arrived (so a caller can act on them, say
   * ask for the next page, while the body is still on its way), and `body()` reads and parses the rest.
   */
  open<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options: RequestOptions<T>): Promise<OpenedAnswer<T>>;
  /**
   * An event stream (POST /chat, GET /sessions/:id/stream): resolves with the response once its headers say
   * it was accepted, its body unread; a refusal throws ServerRefused. No timeout: `signal` ends it.
   */
  stream(method: 'GET' | 'POST', path: string, options: { body?: unknown; what: string; signal?: AbortSignal }): Promise<Response>;
}

/** An answer whose headers have arrived: `url` is the request's, `body()` reads and parses the rest (once). */
export interface OpenedAnswer<T> {
  readonly url: string;
  readonly headers: Headers;
  body(): Promise<T>;
}

interface RequestOptions<T> {
  body?: unknown;
  schema: z.ZodType<T>;
  what: string;
  timeoutMs?: number;
}

export function serverClient(env: NodeJS.ProcessEnv): ServerClient {
  const base = (env.NOMOS_URL || DEFAULT_URL).replace(/\/+$/, '');
  // The client header lets a POST without a body through the server's cross-origin guard (src/api/origin.ts).
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-nomos-client': 'nomos-cli' };
  if (env.NOMOS_TOKEN) headers.authorization = `Bearer ${env.NOMOS_TOKEN}`;

  async function send(method: string, path: string, body: unknown, signal: AbortSignal): Promise<Response> {
    try {
      return await fetch(base + path, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }), signal });
    } catch (error) {
      // The caller's own abort is not a failure to reach the server; a timeout is reported as one, as before.
      const timedOut = signal.reason instanceof DOMException && signal.reason.name === 'TimeoutError';
      if (signal.aborted && !timedOut) throw error;
      const cause = error instanceof Error ? ((error.cause instanceof Error ? error.cause.message : undefined) ?? error.message) : String(error);
      throw new Error(`cannot reach the Nomos server at ${base} (set NOMOS_URL to its address): ${cause}`);
    }
  }

  const open: ServerClient['open'] = async (method, path, { body, schema, what, timeoutMs = 60_000 }) => {
    const response = await send(method, path, body, AbortSignal.timeout(timeoutMs));
    return { url: base + path, headers: response.headers, body: () => readAnswer(response, method, path, what, schema) };
  };

  const stream: ServerClient['stream'] = async (method, path, { body, what, signal = new AbortController().signal }) => {
    const response = await send(method, path, body, signal);
    if (!response.ok) throw refusal(response, await response.text(), what);
    return response;
  };

  function refusal(response: Response, text: string, what: string): ServerRefused {
    const problem = Problem.safeParse(parseJson(text));
    const detail = problem.success ? (problem.data.detail ?? text) : text;
    const code = problem.success ? (problem.data.code ?? null) : null;
    return new ServerRefused(`${base} refused ${what} (${response.status}${code ? ` ${code}` : ''}): ${detail.slice(0, 4000)}`, response.status, code, detail);
  }

  async function readAnswer<T>(response: Response, method: string, path: string, what: string, schema: z.ZodType<T>): Promise<T> {
    const text = await response.text();
    if (!response.ok) throw refusal(response, text, what);
    const parsed = parseJson(text);
    const result = schema.safeParse(parsed);
    if (!result.success) throw new Error(`${base} answered ${method} ${path.split('?')[0] ?? path} with something this client cannot read: ${text.slice(0, 200)}`);
    return result.data;
  }

  return { base, headers, open, stream, request: async (method, path, options) => (await open(method, path, options)).body() };
}

/** The text as JSON, or the text itself when it is not JSON (reported as it came). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
