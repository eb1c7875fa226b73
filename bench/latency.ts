// Timing helpers: percentiles of a sample, and one HTTP GET timed from request to parsed body (keep-alive,
// through Node's fetch).

export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/** GETs a JSON answer; fails loudly on anything but 200. */
export async function getJson(url: string): Promise<any> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${(await response.text()).slice(0, 300)}`);
  return response.json();
}

/** The milliseconds one GET took, body read and parsed. */
export async function timedGet(url: string): Promise<number> {
  const started = performance.now();
  await getJson(url);
  return performance.now() - started;
}
