// The console's one way to the server: same-origin fetch with the signed-in token as a header (never in a URL),
// and problem+json answers turned into ApiError with the server's code and detail, shown to the operator as is.
import { auth } from './auth.svelte.ts';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly body: unknown,
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

export function headers(extra: Record<string, string> = {}): Record<string, string> {
  // A custom header: the server takes a POST without a JSON body only with it (no page of another origin can send it unasked).
  const h: Record<string, string> = { accept: 'application/json', 'x-nomos-client': 'console', ...extra };
  if (auth.token) h.authorization = `Bearer ${auth.token}`;
  return h;
}

export interface Answer<T> {
  data: T;
  headers: Headers;
}

/** A body sent as written with its own media type (a YAML document), where any other body is sent as JSON. */
export class TextBody {
  constructor(
    readonly text: string,
    readonly type: string,
  ) {}
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** More headers, such as If-Match. */
  headers?: Record<string, string>;
}

export async function request<T>(method: string, path: string, body?: unknown, init: RequestOptions = {}): Promise<Answer<T>> {
  const type = body === undefined ? {} : { 'content-type': body instanceof TextBody ? body.type : 'application/json' };
  const h = headers({ ...type, ...init.headers });
  const sent = body instanceof TextBody ? body.text : JSON.stringify(body);
  let res: Response;
  try {
    res = await fetch(path, { method, headers: h, ...(body !== undefined && { body: sent }), ...(init.signal && { signal: init.signal }) });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'unreachable', `the server did not answer (${error instanceof Error ? error.message : String(error)})`, null);
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    parsed = text;
  }
  if (!res.ok) {
    const p = (parsed ?? {}) as { code?: string; detail?: string };
    if (res.status === 401) auth.unauthenticated(p.detail ?? 'sign in');
    throw new ApiError(res.status, p.code ?? `http_${res.status}`, p.detail ?? (typeof parsed === 'string' && parsed !== '' ? parsed : res.statusText), parsed);
  }
  return { data: parsed as T, headers: res.headers };
}

export const get = async <T>(path: string, init: { signal?: AbortSignal } = {}): Promise<T> => (await request<T>('GET', path, undefined, init)).data;
/**
 * Every page of a paged list (a session's events, tool calls, executions), following `Link: <…>; rel="next"`
 * from the first page to the last; `items` takes a page's answer apart.
 */
export async function getAllPages<P, T>(path: string, items: (page: P) => T[], init: { signal?: AbortSignal } = {}): Promise<T[]> {
  const all: T[] = [];
  for (let next: string | null = path; next !== null; ) {
    const answer: Answer<P> = await request<P>('GET', next, undefined, init);
    all.push(...items(answer.data));
    next = /<([^>]+)>;\s*rel="next"/.exec(answer.headers.get('link') ?? '')?.[1] ?? null;
  }
  return all;
}

export const post = async <T>(path: string, body: unknown = {}): Promise<T> => (await request<T>('POST', path, body)).data;
export const put = async <T>(path: string, body: unknown, init: RequestOptions = {}): Promise<T> => (await request<T>('PUT', path, body, init)).data;
export const del = async <T>(path: string, body?: unknown): Promise<T> => (await request<T>('DELETE', path, body)).data;

/** What to show a person for a failure: the server's own detail, with its code. */
export function describe(error: unknown): string {
  if (error instanceof ApiError) return error.status === 0 ? error.detail : `${error.detail} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}
