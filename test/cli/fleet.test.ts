// `nomos fleet` as an operator runs it: the real CLI in a child process against a real server. `import` with a
// YAML or JSON inventory, `entities:` or a bare list; a bad file's errors name its own keys and lines;
// refusals and an unreachable server end non-zero with the reason. `list` (table, --json, --all) and `retire`.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { execNomos, freePort } from '../support/cli-process.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,agent:nomos:agent-secret-1-long-enough-for-32-chars');


const INVENTORY_YAML = `# the lab
entities:
  - slug: lxc:rclone
    type: lxc
    parent: host:strong
    pve_id: 132
  - slug: vm:zimaos
    type: vm
    parent: host:strong
    pve_id: 200
    attributes:
      os: zimaos
  - slug: host:strong
    type: host
    ssh:
      host: 192.168.8.10
      port: 22
      user: root
`;

describe.each(databases)('nomos fleet import on $name', (database) => {
  let server: TestServer;
  let dir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startTestServer(database, { tokens });
    dir = await mkdtemp(join(tmpdir(), 'nomos-fleet-'));
    env = { NOMOS_URL: server.url, NOMOS_TOKEN: 'op-secret-1-long-enough-for-32-chars' };
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const file = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };
  const lines = (stdout: string) => stdout.trim().split('\n').map((l) => l.trim().split(/\s+/));

  it('registers a YAML inventory, hosts and guests, one line per entity', async () => {
    const run = await execNomos(['fleet', 'import', await file('fleet.yaml', INVENTORY_YAML)], env);
    expect(run.code, run.stderr).toBe(0);
    expect(lines(run.stdout)).toEqual([
      ['lxc:rclone', 'created'],
      ['vm:zimaos', 'created'],
      ['host:strong', 'created'],
    ]);
    const read = await server.request('GET', '/entities/host:strong?min_position=' + (await server.runtime.store.head()).position, undefined, {
      authorization: 'Bearer op-secret-1-long-enough-for-32-chars',
    });
    expect(read.body.entity.children).toEqual(['lxc:rclone', 'vm:zimaos']);
  });

  it('reports unchanged entities on a second import, and reads JSON too', async () => {
    const again = await execNomos(['fleet', 'import', await file('fleet.yml', INVENTORY_YAML)], env);
    expect(again.code, again.stderr).toBe(0);
    expect(lines(again.stdout).map(([, result]) => result)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    const json = JSON.stringify({ slug: 'lxc:rclone', type: 'lxc', parent: 'host:strong', pve_id: 133 });
    const updated = await execNomos(['fleet', 'import', await file('one.json', json)], env);
    expect(updated.code, updated.stderr).toBe(0);
    expect(lines(updated.stdout)).toEqual([['lxc:rclone', 'updated']]);
  });

  it('exits non-zero naming the bad value by its key and line, and registers nothing', async () => {
    const before = (await server.runtime.store.head()).position;
    const bad = INVENTORY_YAML.replace('pve_id: 200', 'pve_id: -1').replace('host: 192.168.8.10', 'host: 192.168.8.99');
    const run = await execNomos(['fleet', 'import', await file('bad.yaml', bad)], env);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/bad\.yaml:10: entities\[1\]\.pve_id: pve_id must be a positive integer/);
    expect(run.stdout).toBe('');
    expect((await server.runtime.store.head()).position).toBe(before);
  });

  it('reads a bare list and a JSON `entities:` file, the type following from the slug and ssh written user@address:port', async () => {
    const bare = `- slug: host:pve2\n  ssh: admin@10.1.0.2:2222\n- slug: lxc:web\n  parent: host:pve2\n  pve_id: 101\n`;
    const run = await execNomos(['fleet', 'import', await file('bare.yaml', bare)], env);
    expect(run.code, run.stderr).toBe(0);
    expect(lines(run.stdout)).toEqual([['host:pve2', 'created'], ['lxc:web', 'created']]);
    const read = await server.request('GET', '/entities/host:pve2?min_position=' + (await server.runtime.store.head()).position, undefined, { authorization: `Bearer ${env.NOMOS_TOKEN!}` });
    expect(read.body.entity.ssh).toMatchObject({ host: '10.1.0.2', port: 2222, user: 'admin' });
    const json = JSON.stringify({ entities: [{ slug: 'vm:db', parent: 'host:pve2', pve_id: 102 }] }, null, 2);
    const fromJson = await execNomos(['fleet', 'import', await file('vms.json', json)], env);
    expect(fromJson.code, fromJson.stderr).toBe(0);
    expect(lines(fromJson.stdout)).toEqual([['vm:db', 'created']]);
  });

  it("names each of a bad file's own keys and lines, never zod's words, and registers nothing", async () => {
    const before = (await server.runtime.store.head()).position;
    const bad = ['entities:', '  - slug: host:nas', '    type: server', '  - slug: host:pve3', '    ssh: {host: 10.0.0.3}', '    adress: 10.0.0.3', '  - name: forgot-the-slug', ''].join('\n');
    const run = await execNomos(['fleet', 'import', await file('lines.yaml', bad)], env);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('lines.yaml:3: entities[0].type: "server" is not host, lxc or vm');
    expect(run.stderr).toMatch(/lines\.yaml:6: entities\[1\]\.adress: unknown key for a host/);
    expect(run.stderr).toMatch(/lines\.yaml:7: entities\[2\]\.slug: missing/);
    expect(run.stderr).not.toMatch(/discriminator|Invalid input/i);
    const other = await execNomos(['fleet', 'import', await file('hosts.yaml', 'hosts:\n  - name: nas\n')], env);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('it has `hosts:`');
    expect(other.stderr).toContain('entities:');
    expect((await server.runtime.store.head()).position).toBe(before);
  });

  it('lists the fleet as a table and as JSON, retires an entity, and lists it again with --all', async () => {
    const list = await execNomos(['fleet', 'list'], env);
    expect(list.code, list.stderr).toBe(0);
    const [header, ...rows] = list.stdout.trim().split('\n');
    expect(header).toMatch(/^SLUG\s+KIND\s+TARGET\s+STATUS\s+REACHABILITY\s+LAST CONTACT$/);
    expect(rows.find((r) => r.startsWith('host:strong '))).toMatch(/host:strong\s+host\s+root@192\.168\.8\.10:22\s+active\s+unknown\s+never/);
    expect(rows.find((r) => r.startsWith('lxc:rclone '))).toMatch(/lxc\s+host:strong #133\s+active\s+unknown \(host\)/);

    const agent = await execNomos(['fleet', 'retire', 'vm:zimaos'], { ...env, NOMOS_TOKEN: 'agent-secret-1-long-enough-for-32-chars' });
    expect(agent.code).not.toBe(0);
    expect(agent.stderr).toMatch(/403 forbidden/);
    const retired = await execNomos(['fleet', 'retire', 'vm:zimaos', '--reason', 'moved to the new host'], env);
    expect(retired.code, retired.stderr).toBe(0);
    expect(retired.stdout).toMatch(/^vm:zimaos retired/);
    const twice = await execNomos(['fleet', 'retire', 'vm:zimaos'], env);
    expect(twice.code).not.toBe(0);
    expect(twice.stderr).toMatch(/409 already_retired/);

    const after = await execNomos(['fleet', 'list', '--json'], env);
    expect(after.code, after.stderr).toBe(0);
    const slugs = (JSON.parse(after.stdout) as Array<{ slug: string }>).map((e) => e.slug);
    expect(slugs).toContain('host:strong');
    expect(slugs).not.toContain('vm:zimaos');
    const all = await execNomos(['fleet', 'list', '--all'], env);
    expect(all.stdout.split('\n').find((r) => r.startsWith('vm:zimaos '))).toMatch(/\sretired\s/);
  });

  it('exits non-zero when the server refuses the caller or the file does not parse', async () => {
    const path = await file('ok.yaml', INVENTORY_YAML);
    const agent = await execNomos(['fleet', 'import', path], { ...env, NOMOS_TOKEN: 'agent-secret-1-long-enough-for-32-chars' });
    expect(agent.code).not.toBe(0);
    expect(agent.stderr).toMatch(/403 forbidden.*may not register entities/);
    const broken = await execNomos(['fleet', 'import', await file('broken.json', '{"entities": [')], env);
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toMatch(/broken\.json is not valid JSON/);
    const missing = await execNomos(['fleet', 'import', join(dir, 'nothing.yaml')], env);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/nothing\.yaml/);
  });

  it('exits non-zero naming the URL when no server answers', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await execNomos(['fleet', 'import', await file('fleet2.yaml', INVENTORY_YAML)], { NOMOS_URL: url, NOMOS_TOKEN: 'x' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`cannot reach the Nomos server at ${url}`);
    expect(run.stderr).toMatch(/ECONNREFUSED/);
  });
});
