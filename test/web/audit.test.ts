// The Audit page in a real browser over a real server: sessions written through the API (and two written with the
// clock set back, to span days and the period's edge) give the figures `nomos audit --json` computes, one chart
// group per day with sessions, and CSV/JSON downloads holding exactly the period's sessions, quoted correctly.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { type AuditReport, buildReport } from '../../src/cli/audit-report.ts';
import { fetchSessions } from '../../src/cli/audit.ts';
import { executeSessionCommand, startSession } from '../../src/commands/session.ts';
import { SessionCommand } from '../../src/domain/session/commands.ts';
import { databases } from '../support/databases.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const embedded = databases.find((d) => d.name === 'pglite')!;
const DAY_MS = 86_400_000;
// Quotes, a comma and a line break to quote; and a formula a spreadsheet would run, which the CSV defuses.
const TRICKY_GOAL = '=HYPERLINK("http://x") Move "media", then backups,\nand report back';

/** RFC 4180 as a spreadsheet reads it: quoted fields may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endField = () => {
    row.push(field);
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (quoted && c === '"') {
      quoted = false;
    } else if (quoted) {
      field += c;
    } else if (c === '"') {
      quoted = true;
    } else if (c === ',') {
      endField();
    } else if (c === '\r' && text[i + 1] === '\n') {
      endField();
      rows.push(row);
      row = [];
      i++;
    } else {
      field += c;
    }
  }
  if (field !== '' || row.length > 0) throw new Error(`the CSV does not end with CRLF: ${JSON.stringify(text.slice(-40))}`);
  return rows;
}

const localDay = (iso: string) => {
  const d = new Date(iso);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};

describe('the Audit page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  const ids = { old: '', twoDaysAgo: '', twoDaysAgoFailed: '', tricky: '' };

  /** What `nomos audit --since … --json` prints: the CLI's own pager and report over the same server. */
  const cliReport = async (since: string): Promise<AuditReport> => {
    const { sessions, asOfPosition } = await fetchSessions({ since }, { NOMOS_URL: server.url });
    return buildReport(sessions, asOfPosition);
  };

  beforeAll(async () => {
    server = await startTestServer(embedded);
    browser = await launchBrowser();
    const ctx = { actor: { role: 'operator' as const, id: 'test' } };
    const viaApi = async (goal: string | null, tools: string[], text: string | null, outcome: string | null) => {
      const created = await server.request('POST', '/sessions');
      expect(created.status).toBe(201);
      const id: string = created.body.session_id;
      const send = async (body: Record<string, unknown>) => expect((await server.request('POST', `/sessions/${id}/commands`, body)).status).toBe(200);
      await send({ type: 'post_user_message', text: 'please look at this' });
      if (goal !== null) await send({ type: 'set_goal', goal });
      for (const [i, name] of tools.entries()) await send({ type: 'record_tool_call_requested', tool_call_id: `t${i}`, name, args: { target: 'lxc:rclone', command: 'true' } });
      if (text !== null) await send({ type: 'record_assistant_message', text });
      if (outcome !== null) await send({ type: 'complete_task', outcome, summary: 'done' });
      return id;
    };
    // The API has no way to write the past: these go through the same command handlers with the clock set back.
    const backdated = async (daysAgo: number, goal: string, tools: string[], text: string, outcome: string) => {
      const deps = { ...server.runtime.commandDeps, clock: () => new Date(Date.now() - daysAgo * DAY_MS) };
      const { session_id: id } = await startSession(deps, ctx);
      const send = (body: Record<string, unknown>) => executeSessionCommand(deps, id, SessionCommand.parse(body), ctx);
      await send({ type: 'post_user_message', text: 'please look at this' });
      await send({ type: 'set_goal', goal });
      for (const [i, name] of tools.entries()) await send({ type: 'record_tool_call_requested', tool_call_id: `t${i}`, name, args: { target: 'host:strong', command: 'true' } });
      await send({ type: 'record_assistant_message', text });
      await send({ type: 'complete_task', outcome, summary: 'done' });
      return id;
    };
    await viaApi('Fix the rclone backup so it completes', ['run', 'run', 'get_entity'], 'Memory raised; the backup ran.', 'success');
    await viaApi('Change the owner of /mnt/media', ['run', 'classify_command'], 'There is no tool to change the owner on the NFS export.', 'partial');
    ids.tricky = await viaApi(TRICKY_GOAL, ['run'], 'There is no tool to reach the VPS package manager.', 'partial');
    await viaApi(null, ['whoami'], null, null);
    ids.twoDaysAgo = await backdated(2, 'Renew the certificates', ['run', 'inspect_path'], 'Renewed.', 'success');
    ids.twoDaysAgoFailed = await backdated(2, 'Restart the media server', ['run', 'run'], 'The restart failed with exit code 2.', 'failed');
    ids.old = await backdated(10, 'Clean the old snapshots', ['run'], 'Cleaned.', 'success');
    const head = (await server.runtime.store.head()).position;
    expect((await server.request('GET', `/sessions?min_position=${head}&limit=1`)).status).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const figure = async (page: Page, name: string) => (await page.locator(`[data-figure="${name}"] dd`).textContent())?.trim();
  const tableRows = (page: Page, name: string) =>
    page.getByRole('table', { name, exact: true }).locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent?.trim())));

  it("shows the period's summary with the figures nomos audit computes, and one chart group per day with sessions", async () => {
    const expected = await cliReport('7d');
    expect(expected.summary.sessions).toBe(6);
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/audit?since=7d`);
    await page.getByRole('heading', { name: 'Summary' }).waitFor();
    expect(await figure(page, 'sessions')).toBe(String(expected.summary.sessions));
    for (const outcome of ['success', 'partial', 'failed', 'active'] as const) expect(await figure(page, outcome)).toBe(String(expected.summary.outcomes[outcome]));
    expect(await figure(page, 'median_tool_calls')).toBe(String(expected.summary.median_tool_calls));
    expect(await tableRows(page, 'Blockers')).toEqual(expected.summary.blockers.map((b) => [b.blocker, String(b.count)]));
    expect(await tableRows(page, 'Top tools')).toEqual(expected.summary.top_tools.map((t) => [t.name, String(t.count)]));
    expect(expected.summary.blockers.map((b) => b.blocker)).toEqual(['missing_capability', 'tool_error']);

    // Each day of the period is a group; those with sessions hold one bar per outcome, as many as the API says.
    const { body } = await server.request('GET', '/sessions?since=7d&limit=1000&fields=id,last_active_at');
    const perDay = new Map<string, number>();
    for (const s of body.sessions as Array<{ last_active_at: string }>) perDay.set(localDay(s.last_active_at), (perDay.get(localDay(s.last_active_at)) ?? 0) + 1);
    expect(perDay.size).toBe(2);
    const chart = page.getByTestId('outcome-chart');
    expect(await chart.locator('g.day').count()).toBe(8);
    const drawn = await chart.locator('g.day:not([data-total="0"])').evaluateAll((groups) =>
      groups.map((g) => [g.getAttribute('data-day'), Number(g.getAttribute('data-total')), [...g.querySelectorAll('rect')].reduce((n, r) => n + Number(r.getAttribute('data-count')), 0)]),
    );
    expect(drawn).toEqual([...perDay].sort().map(([day, n]) => [day, n, n]));
    const before = localDay(new Date(Date.now() - 2 * DAY_MS).toISOString());
    expect(await chart.locator(`g.day[data-day="${before}"] rect`).evaluateAll((rects) => rects.map((r) => [r.getAttribute('data-outcome'), r.getAttribute('data-count')]))).toEqual([
      ['success', '1'],
      ['failed', '1'],
    ]);
    expect(await page.getByRole('list', { name: 'Legend' }).getByRole('listitem').allTextContents()).toEqual(['success', 'partial', 'failed', 'active']);
    expect(await tableRows(page, 'Blockers per day')).toEqual([
      [before, '0', '1'],
      [localDay(new Date().toISOString()), '2', '0'],
    ]);
    await screenshot('audit');
    expect(errors).toEqual([]);
  });

  it('downloads exactly the sessions of the period as CSV and JSON, quoted correctly', async () => {
    const expected = await cliReport('7d');
    const { page, errors } = await browser.open(`${server.url}/#/audit?since=7d`);
    await page.getByRole('heading', { name: 'Summary' }).waitFor();

    const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    expect(csvDownload.suggestedFilename()).toMatch(/^nomos-audit-7d-\d{8}-\d{4}\.csv$/);
    const csv = await readFile(await csvDownload.path(), 'utf8');
    const [header, ...rows] = parseCsv(csv);
    expect(header?.slice(0, 6)).toEqual(['id', 'title', 'objective', 'outcome', 'blocker', 'severity']);
    const column = (name: string) => header!.indexOf(name);
    expect(rows.map((r) => r[0])).toEqual(expected.sessions.map((s) => s.id));
    expect(rows.map((r) => r[0])).not.toContain(ids.old);
    expect(rows.map((r) => r[0])).toContain(ids.twoDaysAgo);
    const tricky = rows.find((r) => r[0] === ids.tricky)!;
    expect(tricky[column('objective')]).toBe(`'${TRICKY_GOAL}`);
    expect(tricky[column('outcome')]).toBe('partial');
    expect(tricky[column('blocker')]).toBe('missing_capability');
    expect(csv).toContain(`"'${TRICKY_GOAL.replaceAll('"', '""')}"`);
    for (const [i, entry] of expected.sessions.entries()) {
      expect(rows[i]?.[column('tool_call_count')]).toBe(String(entry.tool_call_count));
      expect(rows[i]?.[column('top_tools')]).toBe(entry.top_tools.map((t) => `${t.name}:${t.count}`).join(' '));
    }

    const [jsonDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download JSON' }).click()]);
    expect(jsonDownload.suggestedFilename()).toMatch(/^nomos-audit-7d-\d{8}-\d{4}\.json$/);
    const json = JSON.parse(await readFile(await jsonDownload.path(), 'utf8'));
    expect(json.since).toBe('7d');
    expect(json.sessions).toEqual(expected.sessions);
    expect(json.summary).toEqual(expected.summary);
    expect(errors).toEqual([]);
  });

  it('changes the period from its control, in the address', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/audit`);
    await page.getByRole('heading', { name: 'Summary' }).waitFor();
    expect(await figure(page, 'sessions')).toBe('6');
    const period = page.getByRole('combobox', { name: /^Period/ });
    await period.selectOption('30d');
    await page.waitForURL(/#\/audit\?since=30d$/);
    await page.locator('[data-figure="sessions"] dd').filter({ hasText: /^7$/ }).waitFor();
    expect(await page.getByRole('row').filter({ has: page.locator(`a[href="#/sessions/${ids.old}"]`) }).count()).toBe(1);
    await period.selectOption('24h');
    await page.waitForURL(/#\/audit\?since=24h$/);
    await page.locator('[data-figure="sessions"] dd').filter({ hasText: /^4$/ }).waitFor();
    expect((await cliReport('24h')).summary.sessions).toBe(4);

    // A custom start: three days back from now takes the two-day-old sessions in and leaves the ten-day-old out.
    await period.selectOption('custom');
    const start = new Date(Date.now() - 3 * DAY_MS);
    const pad = (n: number) => String(n).padStart(2, '0');
    await page.getByLabel('From (local time)').fill(`${start.getFullYear()}-${pad(start.getMonth() + 1)}-${pad(start.getDate())}T${pad(start.getHours())}:${pad(start.getMinutes())}`);
    await page.waitForURL(/#\/audit\?since=\d{4}-\d\d-\d\dT/);
    await page.locator('[data-figure="sessions"] dd').filter({ hasText: /^6$/ }).waitFor();
    const since = new URL(page.url().replace('#/', '')).searchParams.get('since')!;
    expect((await cliReport(since)).summary.sessions).toBe(6);
    expect(errors).toEqual([]);
  });

  // Last: it adds a session to the period.
  it('marks a success the log contradicts as disputed, with the evidence on hover, and counts it', async () => {
    expect((await server.request('POST', '/entities', { slug: 'host:far', type: 'host', ssh: { host: '127.0.0.1', port: 1, user: 'root' } })).status).toBe(200);
    const id = (await server.request('POST', '/sessions')).body.session_id as string;
    // No SSH key is configured: the change is refused as unreachable, and the agent claims success all the same.
    const run = await server.request('POST', `/sessions/${id}/commands`, { type: 'run', target: 'host:far', command: 'chown backup /srv' });
    expect(run.body).toMatchObject({ status: 'refused' });
    const done = await server.request('POST', `/sessions/${id}/commands`, { type: 'complete_task', outcome: 'success', summary: 'Changed the owner.' });
    expect((await server.request('GET', `/sessions?min_position=${done.body.position}&limit=1`)).status).toBe(200);

    const { page, errors } = await browser.open(`${server.url}/#/audit`);
    const badge = page.locator(`tr[data-id="${id}"] [data-field="disputed"]`);
    await badge.waitFor();
    expect(await badge.getAttribute('title')).toBe('closed as success, but its one change did not take effect: 1 refused');
    expect(await figure(page, 'disputed')).toBe('1');
    expect((await cliReport('7d')).summary.disputed).toBe(1);
    expect(errors).toEqual([]);
  });
});
