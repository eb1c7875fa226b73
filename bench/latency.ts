// Timing helpers: percentiles of a sample, one HTTP GET timed from request to parsed body (keep-alive, through
// Node's fetch), and one request on a given keep-alive agent (node:http, no fetch overhead).
import { type Agent, request } from 'node:http';

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

/** One request on `agent`, JSON body when given; resolves with the status and the text, whatever the status. */
export function call(agent: Agent, base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const sent = payload === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) };
    const req = request(`${base}${path}`, { method, agent, headers: sent }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}
