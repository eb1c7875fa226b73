// The sessions list's filters as they live in the page's address (#/sessions?outcome=partial&since=7d) and as
// GET /sessions takes them: one place maps the one to the other, so a copied address shows the same rows.
import { href } from '../../lib/router.svelte.ts';

export const FILTER_KEYS = ['outcome', 'status', 'blocker', 'entity_id', 'since', 'min_tokens'] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
export type Filters = Record<FilterKey, string>;

export const PAGE_SIZE = 50;
export const OUTCOMES = ['success', 'partial', 'failed'] as const;
export const STATUSES = ['active', 'done', 'failed'] as const;
/** Suggestions only: the server filters on any text, and new blockers may come before the console knows them. */
export const BLOCKERS = [
  'approval_timeout', 'approval_denied', 'target_unreachable', 'tool_error', 'model_empty_response', 'model_refusal',
  'user_abandoned', 'classifier_overreach', 'missing_knowledge', 'missing_capability', 'unknown',
] as const;
export const SINCE_PRESETS = ['1h', '24h', '7d', '30d'] as const;

export function filtersOf(query: URLSearchParams): Filters {
  return Object.fromEntries(FILTER_KEYS.map((k) => [k, query.get(k) ?? ''])) as Filters;
}

/** The page's own address; `cursor` and `page` name a later page of the same listing. */
export function viewAddress(filters: Filters, later?: { cursor: string; page: number }): string {
  return href('sessions', { ...filters, ...(later && { cursor: later.cursor, page: String(later.page) }) });
}

/** The API request for one page: empty filters are left out (the server would take them as absent anyway). */
export function apiPath(filters: Filters, cursor: string | null): string {
  const params = new URLSearchParams();
  for (const key of FILTER_KEYS) if (filters[key].trim() !== '') params.set(key, filters[key].trim());
  params.set('limit', String(PAGE_SIZE));
  if (cursor) params.set('cursor', cursor);
  return `/sessions?${params.toString()}`;
}

export const isFiltered = (filters: Filters): boolean => FILTER_KEYS.some((k) => filters[k] !== '');
