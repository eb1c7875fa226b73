// The System page in a real browser over a real server: every projection with the version, state, leader, position
// and lag GET /projections answers, the health GET /healthz answers, and a rebuild's progress while one is under way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { rebuildProjection } from '../../src/projections/projector.ts';
import { databases } from '../support/databases.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

const embedded = databases.find((d) => d.name === 'pglite')!;

interface Row {
  name: string;
  version: number;
  state: string;
  leader: boolean;
  position: number;
  lag: number;
}

/** The table as the page shows it, in the API's terms. */
const shown = (page: Page): Promise<Row[]> =>
  page.locator('table[aria-label="Projections"] tbody tr[data-name]').evaluateAll((rows) =>
    rows.map((r) => {
      const field = (name: string) => r.querySelector(`[data-field="${name}"]`)?.textContent?.trim() ?? '';
      return { name: r.getAttribute('data-name') ?? '', version: Number(field('version')), state: field('state'), leader: field('leader') === 'this server', position: Number(field('position')), lag: Number(field('lag')) };
    }),
  );

describe('the System page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  const api = async (): Promise<{ head_position: number; projections: Array<Row & { rebuild: { position: number; events: number; version: number } | null }> }> =>
    (await server.request('GET', '/projections')).body;

  beforeAll(async () => {
    server = await startTestServer(embedded);
    browser = await launchBrowser();
    const created = await server.request('POST', '/sessions');
    for (let i = 0; i < 6; i++) {
      const res = await server.request('POST', `/sessions/${created.body.session_id}/commands`, { type: 'post_user_message', text: `message ${i}` });
      expect(res.status).toBe(200);
    }
    const entities = Array.from({ length: 8 }, (_, i) => ({ slug: `lxc:guest-${i}`, type: 'lxc', parent: 'host:strong', pve_id: 100 + i }));
    expect((await server.request('POST', '/entities', { entities: [{ slug: 'host:strong', type: 'host', ssh: { host: '192.168.8.10' } }, ...entities] })).status).toBe(200);
    await until('every projection at the head', async () => ((await api()).projections.every((p) => p.lag === 0) ? true : undefined));
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('lists each projection with the version, state, leader, position and lag GET /projections answers, and the health', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/system`);
    await page.locator('table[aria-label="Projections"] tbody tr').first().waitFor();
    const answer = await api();
    expect(answer.projections.length).toBeGreaterThanOrEqual(6);
    const expected = answer.projections.map(({ name, version, state, leader, position, lag }) => ({ name, version, state, leader, position, lag }));
    expect(expected.every((p) => p.position > 0 && p.lag === 0 && p.state === 'live')).toBe(true);
    // The page re-reads on its own: wait for it to show this answer (an idle log does not move any more).
    await until('the table to show GET /projections', async () => (JSON.stringify(await shown(page)) === JSON.stringify(expected) ? true : undefined));

    const health = (await server.request('GET', '/healthz')).body;
    const dd = (field: string) => page.locator(`dl[aria-label="Health"] [data-field="${field}"] dd`).textContent();
    expect(await dd('status')).toBe('ok');
    expect(await dd('event_store')).toBe(health.event_store);
    expect(await dd('read_models')).toBe(health.read_models);
    expect(health.read_models).toMatch(/^pglite/);
    expect(await dd('head_position')).toBe(String(answer.head_position));

    // A new event moves the head; the page follows it without a reload.
    await server.request('POST', '/sessions');
    const moved = await until('the projections to take the new event', async () => {
      const a = await api();
      return a.projections.every((p) => p.lag === 0) && a.head_position > answer.head_position ? a : undefined;
    });
    await page.locator('dl[aria-label="Health"] [data-field="head_position"] dd').filter({ hasText: new RegExp(`^${moved.head_position}$`) }).waitFor();
    expect(errors).toEqual([]);
  });

  it("shows a rebuild's progress while one is under way", async () => {
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/system`);
    await page.locator('table[aria-label="Projections"] tbody tr').first().waitFor();
    // A rebuild stopped after its first batch stays under way, waiting to be resumed: what an interrupted
    // `nomos projections rebuild` leaves.
    const entities = server.runtime.projections.find((p) => p.name === 'entities')!;
    const stop = new AbortController();
    const deps = { store: server.runtime.store, db: server.runtime.db };
    await expect(rebuildProjection(deps, entities, (p) => void (p.events > 0 && stop.abort()), { batchSize: 5, signal: stop.signal })).rejects.toThrow();
    const answer = await api();
    const rebuilding = answer.projections.find((p) => p.name === 'entities')!;
    expect(rebuilding.state).toBe('rebuilding');
    expect(rebuilding.rebuild).not.toBeNull();
    const percent = Math.floor((rebuilding.rebuild!.position / answer.head_position) * 100);
    expect(percent).toBeGreaterThan(0);
    expect(percent).toBeLessThan(100);

    const bar = page.getByRole('progressbar', { name: 'rebuild of entities' });
    await bar.waitFor({ timeout: 10_000 });
    // A poll of the page may have caught the rebuild as it began (position 0); the next one shows where it stopped.
    await until('the bar at the position the rebuild stopped at', async () => ((await bar.getAttribute('aria-valuenow')) === String(percent) ? true : undefined), 10_000);
    expect(await bar.getAttribute('aria-valuenow')).toBe(String(percent));
    expect(await bar.getAttribute('aria-valuetext')).toBe(`${percent}% (position ${rebuilding.rebuild!.position} of ${answer.head_position})`);
    expect((await shown(page)).find((r) => r.name === 'entities')?.state).toBe('rebuilding');
    expect(await page.locator('tr[data-rebuild="entities"]').textContent()).toContain(`${rebuilding.rebuild!.events} events read`);
    await screenshot('system');
    expect(errors).toEqual([]);
  });
});
