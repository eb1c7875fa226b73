// The command log's filters as the address and the API hold them (#/commands?host=host:pve1&status=denied ↔
// GET /executions?host=host:pve1&status=denied), its rows, and its exports: fetched with the signed-in token (a
// plain link would carry none) and saved through a Blob under the name the server gave.
import type { CommandLogEntry } from '../../../../src/projections/executions.ts';
import { ApiError, headers } from '../../lib/api.ts';
import { auth } from '../../lib/auth.svelte.ts';
import { saveFile } from '../audit/export.ts';

/** A row as GET /executions answers it: the execution, its approval, and where to read each in the console. */
export type CommandRow = CommandLogEntry & {
  links: { session: string; execution: string; session_page: string; approval_page: string | null };
};

export interface CommandPage {
  executions: CommandRow[];
  next_cursor: string | null;
  as_of_position: number;
}

/** Every filter, in the order the form shows them; each is a query parameter of the address and of the API. */
export const FILTER_KEYS = ['target', 'host', 'actor', 'approver', 'risk', 'status', 'rule', 'session', 'since', 'until'] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
export type Filters = Record<FilterKey, string>;

export const RISKS = ['reversible_low', 'config_mutation', 'destructive'] as const;
export const STATUSES = ['requested', 'awaiting_approval', 'approved', 'running', 'succeeded', 'failed', 'timed_out', 'refused', 'denied', 'expired', 'cancelled'] as const;

export function filtersOf(query: URLSearchParams): Filters {
  return Object.fromEntries(FILTER_KEYS.map((k) => [k, query.get(k)?.trim() ?? ''])) as Filters;
}

/** The API's query for the filters given (blank ones left out), with more parameters after them. */
export function apiPath(filters: Filters, more: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const key of FILTER_KEYS) if (filters[key] !== '') params.set(key, filters[key]);
  for (const [key, value] of Object.entries(more)) params.set(key, value);
  const q = params.toString();
  return `/executions${q ? `?${q}` : ''}`;
}

/** The file name in a Content-Disposition header (attachment; filename="…"), or the fallback. */
export function attachmentName(disposition: string | null, fallback: string): string {
  const name = /filename="([^"]+)"/.exec(disposition ?? '')?.[1];
  return name !== undefined && /^[\w.-]+$/.test(name) ? name : fallback;
}

/**
 * Every row matching the filters as one file (CSV or JSON), saved as the server named it. A refusal (a bad
 * filter) is thrown as ApiError with the server's detail; `truncated` says the server's cap cut the file.
 */
export async function exportFile(filters: Filters, format: 'csv' | 'json'): Promise<{ name: string; truncated: boolean }> {
  const type = format === 'csv' ? 'text/csv' : 'application/json';
  let res: Response;
  try {
    res = await fetch(apiPath(filters, { format }), { headers: headers({ accept: `${type}, application/problem+json` }) });
  } catch (error) {
    throw new ApiError(0, 'unreachable', `the server did not answer (${error instanceof Error ? error.message : String(error)})`, null);
  }
  const text = await res.text();
  if (!res.ok) {
    let problem: { code?: string; detail?: string } = {};
    try {
      problem = JSON.parse(text) as typeof problem;
    } catch {
      // not a problem document: the status says it
    }
    if (res.status === 401) auth.unauthenticated(problem.detail ?? 'sign in');
    throw new ApiError(res.status, problem.code ?? `http_${res.status}`, problem.detail ?? res.statusText, problem);
  }
  const name = attachmentName(res.headers.get('content-disposition'), `nomos-commands.${format}`);
  saveFile(name, `${type};charset=utf-8`, text);
  return { name, truncated: res.headers.get('x-nomos-export-truncated') === 'true' };
}
