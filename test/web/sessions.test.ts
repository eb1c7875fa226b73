// The console's sessions list in a real browser: sessions written through the API appear with their aggregates,
// every filter narrows the list and lives in the address (so a copied address shows the same), a server's 400
// reads as an error card, new sessions appear live, pages follow the cursor, and 1 000 sessions page quickly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSession, executeSessionCommand } from '../../src/commands/session.ts';
import { databases } from '../support/databases.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { applied, shownIds, waitForRows, writeSession } from './sessions-fixtures.ts';

const embedded = databases.find((d) => d.name === 'pglite')!;
/** Chromium logs a failed fetch as a console error; where a 400 is the point of the test, that one is expected. */
const besides400 = (errors: string[]) => errors.filter((e) => !/status of 400/.test(e));

describe('the sessions list', () => {
  let server: TestServer;
  let browser: TestBrowser;
  const ids: Record<'rclone' | 'dns' | 'disk' | 'open', string> = { rclone: '', dns: '', disk: '', open: '' };

  beforeAll(async () => {
    server = await startTestServer(embedded);
    browser = await launchBrowser();
    const rclone = await writeSession(server, {
      user: 'the rclone backup is broken',
      goal: 'Fix the rclone backup',
      calls: [
        { id: 't1', name: 'run', args: { target: 'lxc:rclone', command: 'systemctl status rclone-backup.timer' }, result: { exit_code: 0, stdout: 'active (waiting)' } },
        { id: 't2', name: 'run', args: { target: 'lxc:rclone', command: 'journalctl -u rclone-backup' }, result: { exit_code: 0, stdout: 'oom-kill' } },
        { id: 't3', name: 'search_knowledge', args: { query: 'rclone memory' }, result: [] },
      ],
      assistant: 'The container runs out of memory.',
      outcome: 'partial',
      summary: 'diagnosed OOM, but there is no knowledge of the backup layout',
    });
    const dns = await writeSession(server, { goal: 'Restore DNS on the resolver', outcome: 'failed', summary: 'stopped here' });
    const disk = await writeSession(server, { goal: 'Grow the root disk of host:strong', calls: [{ id: 'd1', name: 'run', args: { target: 'host:strong', command: 'df -h' }, result: 'ok' }], outcome: 'success', summary: 'grown' });
    const open = await writeSession(server, { goal: 'Watch the load on host:strong' });
    Object.assign(ids, { rclone: rclone.id, dns: dns.id, disk: disk.id, open: open.id });
    await applied(server, open.position);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('lists sessions written through the API with their aggregates and how fresh the view is', async () => {
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/sessions`);
    await waitForRows(page, Object.values(ids), 'the four sessions');
    const row = page.locator(`tr[data-session-id="${ids.rclone}"]`);
    const text = await row.innerText();
    for (const part of ['Fix the rclone backup', 'done', 'partial', 'missing_knowledge', 'run ×2', 'search_knowledge ×1', 'lxc:rclone']) expect(text).toContain(part);
    expect(await row.locator('td.num').allInnerTexts()).toEqual(['3', '0', '1']);
    expect(await page.locator(`tr[data-session-id="${ids.open}"]`).innerText()).toContain('active');
    // Newest first: the open session was written last.
    expect((await shownIds(page))[0]).toBe(ids.open);
    const head = (await server.request('GET', '/sessions?limit=1')).body.as_of_position;
    expect(await page.getByRole('status', { name: 'freshness' }).innerText()).toBe(`Up to date: shows everything recorded up to event #${head}, the latest in the log`);
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);

    await page.getByRole('link', { name: 'Fix the rclone backup' }).click();
    await page.waitForURL(new RegExp(`#/sessions/${ids.rclone}$`));
    await page.goBack();
    await waitForRows(page, Object.values(ids), 'the list again');
    await screenshot('sessions');
    expect(errors).toEqual([]);
  });

  it('narrows the list by each filter, carries it in the address, and shows the same when that address is loaded', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/sessions`);
    await waitForRows(page, Object.values(ids), 'all sessions');

    await page.getByRole('combobox', { name: 'Outcome' }).selectOption('partial');
    await waitForRows(page, [ids.rclone], 'outcome=partial');
    expect(page.url()).toMatch(/#\/sessions\?outcome=partial$/);
    await page.getByRole('combobox', { name: 'Outcome' }).selectOption('');
    await waitForRows(page, Object.values(ids), 'any outcome');

    await page.getByRole('combobox', { name: 'Status' }).selectOption('active');
    await waitForRows(page, [ids.open], 'status=active');
    expect(page.url()).toContain('status=active');
    await page.getByRole('combobox', { name: 'Status' }).selectOption('done');
    await waitForRows(page, [ids.rclone, ids.disk], 'status=done');
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await waitForRows(page, Object.values(ids), 'cleared');

    await page.getByLabel('Blocker').fill('unknown');
    await waitForRows(page, [ids.dns], 'blocker=unknown');
    expect(page.url()).toContain('blocker=unknown');
    await page.getByLabel('Blocker').fill('');

    await page.getByLabel('Entity').fill('lxc:rclone');
    await waitForRows(page, [ids.rclone], 'entity_id=lxc:rclone');
    expect(page.url()).toContain('entity_id=lxc%3Arclone');
    await page.getByLabel('Entity').fill('host:strong');
    await waitForRows(page, [ids.disk], 'entity_id=host:strong');
    // Typing replaces the address rather than stacking one history entry per keystroke.
    expect(await page.evaluate<number>('history.length')).toBeLessThan(8);
    await page.getByLabel('Entity').fill('');

    await page.getByLabel('Active since').fill('1h');
    await waitForRows(page, Object.values(ids), 'since=1h');
    await page.getByLabel('Active since').fill('2099-01-01T00:00:00Z');
    await page.getByText('No sessions match these filters.').waitFor();
    expect(await shownIds(page)).toEqual([]);
    expect(errors).toEqual([]);

    // Filters together, loaded straight from a copied address.
    const copied = await browser.open(`${server.url}/#/sessions?status=done&entity_id=lxc:rclone&since=24h`);
    await waitForRows(copied.page, [ids.rclone], 'the copied address');
    expect(await copied.page.getByRole('combobox', { name: 'Status' }).inputValue()).toBe('done');
    expect(await copied.page.getByLabel('Entity').inputValue()).toBe('lxc:rclone');
    expect(await copied.page.getByLabel('Active since').inputValue()).toBe('24h');
    expect(copied.errors).toEqual([]);
  });

  it('shows a filter the server refuses as an error card with its detail, and recovers when it is fixed', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/sessions?since=yesterday-ish`);
    const card = page.locator('.error-card');
    await card.waitFor();
    expect(await card.innerText()).toMatch(/since takes an RFC 3339 time/);
    await page.getByLabel('Active since').fill('7d');
    await waitForRows(page, Object.values(ids), 'a valid since');
    expect(await card.count()).toBe(0);
    expect(besides400(errors)).toEqual([]);
  });

  it('shows a session written while the list is open, without a reload', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/sessions`);
    await waitForRows(page, Object.values(ids), 'the list');
    const before = await page.getByRole('status', { name: 'freshness' }).innerText();
    const fresh = await writeSession(server, { goal: 'Appeared while watching', outcome: 'failed', summary: 'the target was unreachable' });
    const rows = await waitForRows(page, [...Object.values(ids), fresh.id], 'the new session');
    expect(rows[0]).toBe(fresh.id);
    expect(await page.locator(`tr[data-session-id="${fresh.id}"]`).innerText()).toContain('target_unreachable');
    expect(await page.getByRole('status', { name: 'freshness' }).innerText()).not.toBe(before);
    expect(errors).toEqual([]);
  });

  it('reads at a phone’s width: the page does not overflow, the table scrolls inside its frame', async () => {
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/sessions?outcome=partial`, { width: 390, height: 844 });
    await page.locator('table[aria-label="Sessions"] tbody tr').first().waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    expect(await page.getByRole('columnheader', { name: 'Top tools' }).isVisible()).toBe(false);
    expect(await page.getByRole('link', { name: 'Fix the rclone backup' }).isVisible()).toBe(true);
    await screenshot('sessions-phone');
    expect(errors).toEqual([]);
  });

  describe('with 1 000 sessions', () => {
    const COUNT = 1_000;
    beforeAll(async () => {
      // Straight through the command functions (what the API calls), in parallel batches: fast, and the same events.
      const deps = server.runtime.commandDeps;
      const ctx = { actor: { role: 'agent' as const, id: 'seed' } };
      let last = 0;
      const t = Date.now();
      for (let batch = 0; batch < COUNT; batch += 100) {
        const written = await Promise.all(
          Array.from({ length: 100 }, async (_, i) => {
            const { session_id: id } = await startSession(deps, ctx);
            return (await executeSessionCommand(deps, id, { type: 'set_goal', goal: `Seeded session ${String(batch + i).padStart(4, '0')}` }, ctx)).position;
          }),
        );
        last = Math.max(last, ...written);
      }
      await applied(server, last);
      console.log(`seeded ${COUNT} sessions in ${Date.now() - t} ms`);
    }, 120_000);

    it('renders the first page of 50 rows, and the next pages follow the server’s order', async () => {
      const started = Date.now();
      const { page, errors, screenshot } = await browser.open(`${server.url}/#/sessions`);
      await page.locator('table[aria-label="Sessions"] tbody tr').nth(49).waitFor();
      const elapsed = Date.now() - started;
      console.log(`1 000 sessions: first 50 rows visible ${elapsed} ms after navigation`);
      expect(elapsed).toBeLessThan(10_000);

      const expected: string[] = (await server.request('GET', '/sessions?limit=150&fields=id')).body.sessions.map((s: { id: string }) => s.id);
      const first = await shownIds(page);
      expect(first).toEqual(expected.slice(0, 50));

      await page.getByRole('link', { name: 'Next page' }).click();
      await page.waitForURL(/cursor=/);
      const second = await waitForRows(page, expected.slice(50, 100), 'page 2');
      expect(second).toEqual(expected.slice(50, 100));
      await page.getByText('page 2 · 50 sessions').waitFor();

      await page.getByRole('link', { name: 'Next page' }).click();
      expect(await waitForRows(page, expected.slice(100, 150), 'page 3')).toEqual(expected.slice(100, 150));

      // A page's address is enough to show it again.
      const copied = await browser.open(page.url());
      expect(await waitForRows(copied.page, expected.slice(100, 150), 'page 3 from its address')).toEqual(expected.slice(100, 150));

      await page.getByRole('link', { name: 'First page' }).click();
      expect(await waitForRows(page, expected.slice(0, 50), 'page 1 again')).toEqual(expected.slice(0, 50));
      await screenshot('sessions-1000');
      expect(errors).toEqual([]);
      expect(copied.errors).toEqual([]);
    });
  });
});
