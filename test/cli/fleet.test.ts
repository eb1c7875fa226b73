// `nomos fleet import FILE` as an operator runs it: the real CLI in a child process against a real server,
// with a YAML or JSON inventory; refusals and an unreachable server end non-zero with the reason.
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

  it('exits non-zero with the server problem for a bad file, and registers nothing', async () => {
    const before = (await server.runtime.store.head()).position;
    const bad = INVENTORY_YAML.replace('pve_id: 200', 'pve_id: -1').replace('host: 192.168.8.10', 'host: 192.168.8.99');
    const run = await execNomos(['fleet', 'import', await file('bad.yaml', bad)], env);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/400 validation_failed.*body\.entities\.1\.pve_id/);
    expect(run.stdout).toBe('');
    expect((await server.runtime.store.head()).position).toBe(before);
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
