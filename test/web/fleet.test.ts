// The Fleet page in a real browser over a real server: an inventory written through the API shows grouped by type
// with state and attributes, filters that live in the address, relations that navigate, knowledge and its search;
// a host whose connections are refused shows unreachable with the error and when it was last seen, not "active".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { utils } from 'ssh2';
import { SshExecutor } from '../../src/adapters/ssh/executor.ts';
import { databases } from '../support/databases.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const embedded = databases.find((d) => d.name === 'pglite')!;

describe('the Fleet page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let runbookId = '';
  const runbookBody = 'rclone is OOM-killed at 512 MiB during the nightly sync.\nRaise the container memory: pct set 110 --memory 2048, then restart the timer.';

  const post = async (path: string, body: unknown) => {
    const res = await server.request('POST', path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  /** Waits until the read models hold everything written so far. */
  const settled = async () => {
    const head = (await server.runtime.store.head()).position;
    expect((await server.request('GET', `/entities?min_position=${head}`)).status).toBe(200);
    expect((await server.request('GET', `/knowledge?q=rclone&min_position=${head}`)).status).toBe(200);
  };

  beforeAll(async () => {
    server = await startTestServer(embedded);
    browser = await launchBrowser();
    await post('/entities', {
      entities: [
        { slug: 'host:strong', type: 'host', ssh: { host: '192.168.8.10' }, state: 'active', attributes: { kernel: '6.8.12-pve', cpu: 'Ryzen 7 5700G' } },
        { slug: 'host:netbird-vps', type: 'host', ssh: { host: '10.0.0.5', user: 'admin', port: 2222 }, state: 'provisioning' },
        { slug: 'lxc:rclone', type: 'lxc', parent: 'host:strong', pve_id: 110, state: 'active', attributes: { memory_mb: 512 } },
        { slug: 'lxc:old-build', type: 'lxc', parent: 'host:strong', pve_id: 130, state: 'destroyed' },
        { slug: 'vm:zimaos', type: 'vm', parent: 'host:strong', pve_id: 200, state: 'active', attributes: { os: 'ZimaOS 1.2' } },
      ],
    });
    await post('/entities/lxc:rclone/relations', { to: 'vm:zimaos', type: 'backs_up' });
    await post('/entities/lxc:rclone/attributes', { attributes: { memory_mb: 2048, backup_target: 'b2:media' } });
    runbookId = (await post('/knowledge', { kind: 'runbook', title: 'rclone backup OOM', body: runbookBody, about: ['lxc:rclone', 'host:strong'], tags: ['rclone', 'memory'] })).knowledge_id;
    await post('/knowledge', { kind: 'investigation', title: 'ZimaOS folder moves fail', body: 'The export root was root:root 755; a chown of the root fixed it.', about: ['vm:zimaos', 'pool:ludo-lvm'] });
    await settled();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('lists hosts, containers and VMs with their state and attributes, filtered by type and state in the address', async () => {
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/fleet?q=rclone`);
    const row = (slug: string) => page.locator(`tr[data-slug="${slug}"]`);
    await row('vm:zimaos').waitFor();
    for (const [table, slugs] of [['Hosts', ['host:netbird-vps', 'host:strong']], ['Containers', ['lxc:old-build', 'lxc:rclone']], ['VMs', ['vm:zimaos']]] as const) {
      expect(await page.getByRole('table', { name: table }).locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-slug')))).toEqual(slugs);
    }
    expect(await row('host:netbird-vps').getByTestId('entity-state').textContent()).toBe('provisioning');
    expect(await row('lxc:old-build').getByTestId('entity-state').textContent()).toBe('destroyed');
    expect(await row('lxc:rclone').getByTestId('entity-state').textContent()).toBe('active');
    expect(await row('host:netbird-vps').textContent()).toContain('admin@10.0.0.5:2222');
    const rclone = row('lxc:rclone').getByRole('definition');
    expect(await rclone.allTextContents()).toEqual(['b2:media', '2048']);
    expect(await row('host:strong').textContent()).toContain('6.8.12-pve');
    await page.getByRole('list', { name: 'Knowledge results' }).getByRole('link', { name: 'rclone backup OOM' }).waitFor();
    await screenshot('fleet');

    await page.getByLabel('Type').selectOption('lxc');
    await page.waitForURL(/#\/fleet\?q=rclone&type=lxc$/);
    await row('vm:zimaos').waitFor({ state: 'detached' });
    expect(await page.getByRole('table').count()).toBe(1);
    await page.getByLabel('State').selectOption('destroyed');
    await page.waitForURL(/type=lxc&state=destroyed$/);
    await row('lxc:rclone').waitFor({ state: 'detached' });
    expect(await page.locator('tr[data-slug]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-slug')))).toEqual(['lxc:old-build']);

    // The address alone restores the view; the name filter narrows within it.
    await page.goto(`${server.url}/#/fleet?name=zima`);
    await row('vm:zimaos').waitFor();
    expect(await page.getByLabel('Name contains').inputValue()).toBe('zima');
    expect(await page.locator('tr[data-slug]').count()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('shows an entity with its relations, navigates along them, and shows its knowledge whole', async () => {
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/fleet`);
    await page.getByRole('link', { name: 'lxc:rclone', exact: true }).click();
    await page.waitForURL(/#\/fleet\/lxc%3Arclone$/);
    await page.getByRole('heading', { name: 'lxc:rclone', level: 1 }).waitFor();
    const relations = page.getByRole('region', { name: 'Relations' });
    await relations.getByText('Hosted by').waitFor();
    expect(await page.getByRole('list', { name: 'Links of lxc:rclone' }).textContent()).toMatch(/lxc:rclone\s*backs up\s*vm:zimaos/);

    const knowledge = page.getByRole('list', { name: 'Runbooks' });
    expect(await knowledge.getByRole('link').allTextContents()).toEqual(['rclone backup OOM']);
    await knowledge.getByRole('button', { name: 'Show text of rclone backup OOM' }).click();
    expect(await page.getByLabel('text of rclone backup OOM').textContent()).toBe(runbookBody);
    await screenshot('fleet-entity');

    // A runbook written while the page is open appears without a reload.
    await post('/knowledge', { kind: 'runbook', title: 'rclone timer restart', body: 'systemctl restart rclone-backup.timer', about: ['lxc:rclone'] });
    await knowledge.getByRole('link', { name: 'rclone timer restart' }).waitFor();

    await relations.getByRole('link', { name: 'host:strong' }).click();
    await page.waitForURL(/#\/fleet\/host%3Astrong$/);
    const guests = page.getByRole('list', { name: 'Guests of host:strong' });
    await guests.waitFor();
    expect(await guests.getByRole('link').allTextContents()).toEqual(['lxc:old-build', 'lxc:rclone', 'vm:zimaos']);
    await guests.getByRole('link', { name: 'vm:zimaos' }).click();
    await page.waitForURL(/#\/fleet\/vm%3Azimaos$/);
    expect(await page.getByRole('list', { name: 'Links of vm:zimaos' }).textContent({ timeout: 5_000 })).toMatch(/lxc:rclone\s*backs up\s*vm:zimaos/);
    expect(await page.getByRole('list', { name: 'Investigations and notes' }).getByRole('link').allTextContents()).toEqual(['ZimaOS folder moves fail']);
    expect(errors).toEqual([]);
  });

  it('searches knowledge from the address and opens a result whole', async () => {
    const { page, errors } = await browser.open(`${server.url}/#/fleet`);
    await page.getByLabel('Search runbooks and notes').fill('memory nightly');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/#\/fleet\?q=memory\+nightly$/);
    const results = page.getByRole('list', { name: 'Knowledge results' });
    await results.waitFor();
    expect(await results.locator(':scope > li').count()).toBe(1);
    expect(await results.locator('strong').allTextContents()).toContain('nightly');
    await results.getByRole('link', { name: 'rclone backup OOM' }).click();
    await page.waitForURL(new RegExp(`#/fleet/knowledge/${runbookId}$`));
    expect(await page.getByLabel('text of rclone backup OOM').textContent()).toBe(runbookBody);
    expect(await page.getByRole('link', { name: 'lxc:rclone' }).count()).toBe(1);

    await page.goto(`${server.url}/#/fleet?q=chown`);
    await results.getByRole('link', { name: 'ZimaOS folder moves fail' }).waitFor();
    // pool:ludo-lvm is not in the inventory: named, not linked.
    expect(await results.getByRole('link', { name: 'pool:ludo-lvm' }).count()).toBe(0);
    expect(await results.getByText('pool:ludo-lvm').count()).toBe(1);
    expect(errors).toEqual([]);
  });
});

describe('the Fleet page and an unreachable host', () => {
  let server: TestServer;
  let browser: TestBrowser;

  beforeAll(async () => {
    // A real SSH executor, pointed at a loopback port nothing listens on: its connection is refused.
    const { private: privateKey } = utils.generateKeyPairSync('ed25519');
    server = await startTestServer(embedded, { executor: new SshExecutor({ privateKey, connectTimeoutMs: 3_000 }) });
    browser = await launchBrowser();
    const probe = createServer();
    await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', ok));
    const port = (probe.address() as { port: number }).port;
    await new Promise((ok) => probe.close(ok));
    const reg = await server.request('POST', '/entities', { entities: [{ slug: 'host:old-nas', type: 'host', ssh: { host: '127.0.0.1', port } }, { slug: 'host:fresh', type: 'host', ssh: { host: '127.0.0.1', port } }] });
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    const session = (await server.request('POST', '/sessions')).body.session_id;
    const run = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target: 'host:old-nas', command: 'uptime' });
    expect(run.body).toMatchObject({ status: 'refused', reason: 'unreachable' });
    expect((await server.request('GET', `/entities?min_position=${run.body.position}`)).status).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows it unreachable with the error and when it was last seen, where a host never tried stays active', async () => {
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/fleet`);
    const row = page.locator('tr[data-slug="host:old-nas"]');
    await row.waitFor();
    expect(await row.getByTestId('entity-state').textContent()).toBe('unreachable');
    const health = await row.getByTestId('entity-health').textContent();
    expect(health).toMatch(/ECONNREFUSED|refused/);
    expect(health).toContain('last seen never');
    expect(await page.locator('tr[data-slug="host:fresh"]').getByTestId('entity-state').textContent()).toBe('active');
    await screenshot('fleet-unreachable');
    expect(errors).toEqual([]);
  });
});
