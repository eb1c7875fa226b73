// Hash routes (#/sessions?outcome=partial): the API owns the server's paths (/sessions/:id answers JSON), so the
// console's views live after the #, and a view's filters live in its query so that a copied address shows the same.
export interface Route {
  /** Path segments after #/, e.g. ['sessions', '3f2c…']. */
  segments: string[];
  query: URLSearchParams;
}

function parse(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [path = '', query = ''] = raw.split('?', 2);
  const segments = path.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
  return { segments: segments.length === 0 ? ['sessions'] : segments, query: new URLSearchParams(query) };
}

class Router {
  current = $state<Route>(parse(location.hash));
  constructor() {
    window.addEventListener('hashchange', () => (this.current = parse(location.hash)));
  }
}

export const router = new Router();

/** The address of a view: href('sessions', id) or href('sessions', {outcome: 'partial'}). */
export function href(...parts: Array<string | Record<string, string | undefined | null>>): string {
  const segments = parts.filter((p): p is string => typeof p === 'string').map((s) => encodeURIComponent(s));
  const params = new URLSearchParams();
  for (const p of parts) {
    if (typeof p === 'string') continue;
    for (const [k, v] of Object.entries(p)) if (v !== undefined && v !== null && v !== '') params.set(k, v);
  }
  const q = params.toString();
  return `#/${segments.join('/')}${q ? `?${q}` : ''}`;
}

/** Goes to a view; `replace` keeps the history clean while a filter is being typed. */
export function go(address: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', address);
  else history.pushState(null, '', address);
  router.current = parse(location.hash);
}
