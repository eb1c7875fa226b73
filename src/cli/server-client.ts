// How the CLI talks to a running server: NOMOS_URL (default loopback :8092) and NOMOS_TOKEN, and one way of
// reporting an unreachable server or a refused request (with the server's problem code and detail).
import { z } from 'zod';

export const DEFAULT_URL = 'http://127.0.0.1:8092';

const Problem = z.object({ code: z.string().optional(), detail: z.string().optional() });

export interface ServerClient {
  readonly base: string;
  readonly headers: Record<string, string>;
  /** Sends a request and parses the JSON answer with `schema`; throws a readable Error on any failure. */
  request<T>(method: 'GET' | 'POST', path: string, options: RequestOptions<T>): Promise<T>;
  /**
   * request, in two steps: resolves once the answer's headers have arrived (so a caller can act on them, say
   * ask for the next page, while the body is still on its way), and `body()` reads and parses the rest.
   */
  open<T>(method: 'GET' | 'POST', path: string, options: RequestOptions<T>): Promise<OpenedAnswer<T>>;
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
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (env.NOMOS_TOKEN) headers.authorization = `Bearer ${env.NOMOS_TOKEN}`;

  const open: ServerClient['open'] = async (method, path, { body, schema, what, timeoutMs = 60_000 }) => {
    const url = base + path;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const cause = error instanceof Error ? ((error.cause instanceof Error ? error.cause.message : undefined) ?? error.message) : String(error);
      throw new Error(`cannot reach the Nomos server at ${base} (set NOMOS_URL to its address): ${cause}`);
    }
    return { url, headers: response.headers, body: () => readAnswer(response, method, path, what, schema) };
  };

  async function readAnswer<T>(response: Response, method: string, path: string, what: string, schema: z.ZodType<T>): Promise<T> {
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: reported as text below
    }
    if (!response.ok) {
      const problem = Problem.safeParse(parsed);
      const detail = problem.success ? (problem.data.detail ?? text) : text;
      const code = problem.success && problem.data.code ? ` ${problem.data.code}` : '';
      throw new Error(`${base} refused ${what} (${response.status}${code}): ${detail.slice(0, 4000)}`);
    }
    const result = schema.safeParse(parsed);
    if (!result.success) throw new Error(`${base} answered ${method} ${path.split('?')[0] ?? path} with something this client cannot read: ${text.slice(0, 200)}`);
    return result.data;
  }

  return { base, headers, open, request: async (method, path, options) => (await open(method, path, options)).body() };
}
