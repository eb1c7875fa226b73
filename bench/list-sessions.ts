// GET /sessions over HTTP, limit 50, with the filters auditors use, one request after another: p50 and p99.
import { getJson, percentile, timedGet } from './latency.ts';

const FILTERS = [
  '',
  'status=done',
  'status=active',
  'outcome=partial',
  'outcome=failed&since=7d',
  'blocker=approval_timeout',
  'blocker=tool_error&since=30d',
  'since=24h',
  'entity_id=lxc:rclone',
  'entity_id=lxc:pihole&outcome=partial',
];

export interface ListLatency {
  readonly requests: number;
  readonly p50: number;
  readonly p99: number;
}

export async function listSessionsLatency(base: string, requests: number): Promise<ListLatency> {
  // The second page of each filter too: keyset pages must be as fast as the first.
  const urls: string[] = [];
  for (const filter of FILTERS) {
    const first = `${base}/sessions?limit=50${filter ? `&${filter}` : ''}`;
    urls.push(first);
    const page = await getJson(first);
    if (page.next_cursor) urls.push(`${first}&cursor=${page.next_cursor as string}`);
  }
  for (let i = 0; i < Math.min(50, requests); i++) await timedGet(urls[i % urls.length]!); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < requests; i++) samples.push(await timedGet(urls[i % urls.length]!));
  return { requests, p50: percentile(samples, 50), p99: percentile(samples, 99) };
}
