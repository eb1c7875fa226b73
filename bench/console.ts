// `npm run bench:console [-- --sessions N --runs N]`: how soon the web console's sessions page is usable on the
// embedded default — a real `nomos serve` on PGlite holding N sessions (1 000 by default, written through the
// API), opened in headless Chromium (Debian's, driven by playwright-core): the time from navigation to the first
// page's 50 rows, beside the server's own GET /sessions?limit=50 measured from a client. Prints a table.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { startServer } from './server.ts';
import { ms, n, renderTable } from './table.ts';

const CHROMIUM = process.env.NOMOS_CHROMIUM ?? '/usr/bin/chromium';
const ROWS = 'table[aria-label="Sessions"] tbody tr';
const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const log = (message: string) => console.error(`bench:console: ${message}`);

async function post(base: string, path: string, body?: unknown): Promise<{ session_id: string; position: number }> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'x-nomos-client': 'bench', ...(body !== undefined && { 'content-type': 'application/json' }) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { session_id: string; position: number };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sessions: { type: 'string', default: '1000' }, runs: { type: 'string', default: '7' }, port: { type: 'string', default: '18093' } } });
  const count = Number(values.sessions);
  const runs = Number(values.runs);
  const dir = mkdtempSync(join(tmpdir(), 'nomos-bench-console-'));
  const server = await startServer(null, Number(values.port), join(dir, 'data'));
  try {
    log(`writing ${count} sessions through the API`);
    let last = 0;
    for (let done = 0; done < count; done += 20) {
      const written = await Promise.all(
        Array.from({ length: Math.min(20, count - done) }, async (_, i) => {
          const { session_id: id } = await post(server.base, '/sessions');
          return (await post(server.base, `/sessions/${id}/commands`, { type: 'set_goal', goal: `Bench session ${done + i}` })).position;
        }),
      );
      last = Math.max(last, ...written);
    }
    await fetch(`${server.base}/sessions?limit=1&min_position=${last}`);

    const api: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      await (await fetch(`${server.base}/sessions?limit=50`)).text();
      api.push(performance.now() - t);
    }
    api.sort((a, b) => a - b);

    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
    });
    const usable: number[] = [];
    try {
      for (let i = 0; i < runs; i++) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        const page = await context.newPage();
        await page.goto(`${server.base}/#/sessions`);
        await page.locator(ROWS).nth(49).waitFor({ timeout: 30_000 });
        // The page's own clock: from the start of navigation, so the browser's start-up is not counted.
        usable.push(await page.evaluate(() => performance.now()));
        await context.close();
      }
    } finally {
      await browser.close();
    }
    usable.sort((a, b) => a - b);
    // The first run also compiles the page's script into the browser's cache: shown apart.
    console.log(
      renderTable(
        [`# Web console on the embedded default (PGlite), ${n(count)} sessions, headless Chromium on the same machine`],
        [
          { metric: `sessions page usable (50 rows shown), median of ${runs} navigations`, figure: ms(quantile(usable, 0.5)), target: '≤ 1 000 ms', met: quantile(usable, 0.5) <= 1_000 },
          { metric: 'sessions page usable, slowest navigation', figure: ms(usable.at(-1) ?? NaN), target: null },
          { metric: 'GET /sessions?limit=50 from a client, p50 (200 requests)', figure: ms(quantile(api, 0.5)), target: null },
          { metric: 'GET /sessions?limit=50 from a client, p99', figure: ms(quantile(api, 0.99)), target: null },
        ],
        { judged: true },
      ),
    );
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
