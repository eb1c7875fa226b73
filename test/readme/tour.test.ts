// The README's API examples run as a newcomer would run them: examples/tour.sh, top to bottom, against a real
// `nomos serve` on a fresh embedded data directory (and on a fresh PostgreSQL database when DATABASE_URL is set),
// with a real SSH server as the fleet's host. The script checks every answer itself; this test also holds the
// README's blocks and the script's sections equal, so neither can drift from the other.
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, type Started, freePort, killAll, listening, nomos, within } from '../support/cli-process.ts';
import { postgresDatabase, type TestDb } from '../support/databases.ts';
import { type SshPeer, startSshPeer } from '../support/ssh-peer.ts';
import { startTour } from './tour-host.ts';
import { generateSigningKey, writeSigningKey } from '../../src/log/keys.ts';

const TOUR = join(REPO, 'examples/tour.sh');
const README = join(REPO, 'README.md');

/** The fenced sh blocks of the README's API section, but those a `<!-- not in examples/tour.sh … -->` line exempts. */
function readmeBlocks(readme: string): string[] {
  const start = readme.indexOf('\n## API\n');
  const end = readme.indexOf('\n## ', start + 1);
  if (start === -1 || end === -1) throw new Error('README.md has no "## API" section followed by another');
  const lines = readme.slice(start, end).split('\n');
  const blocks: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    const close = lines.indexOf('```', i + 1);
    const before = lines.slice(0, i).filter((line) => line.trim() !== '').at(-1) ?? '';
    if (!before.startsWith('<!-- not in examples/tour.sh')) blocks.push(lines.slice(i + 1, close).join('\n'));
    i = close;
  }
  return blocks;
}

/** The script's sections (from a `# README:` line to the next, or to the end of the blocks), without its checks. */
function tourSections(script: string): string[] {
  const lines = script.slice(0, script.indexOf("\n# end of the README's blocks")).split('\n');
  const sections: string[][] = [];
  for (const line of lines) {
    if (line.startsWith('# README: ')) sections.push([]);
    else if (!/^check(_error_next)?\b/.test(line)) sections.at(-1)?.push(line);
  }
  return sections.map((section) => section.join('\n').trimEnd());
}

describe('the README and examples/tour.sh', () => {
  it('show the same commands: each README block of the API section is a section of the script, in order', async () => {
    const [readme, script] = await Promise.all([readFile(README, 'utf8'), readFile(TOUR, 'utf8')]);
    const blocks = readmeBlocks(readme);
    expect(blocks.length).toBeGreaterThan(4);
    expect(tourSections(script)).toEqual(blocks);
  });
});

const servers = [
  { name: 'the embedded default', database: null },
  ...(postgresDatabase ? [{ name: 'PostgreSQL', database: postgresDatabase }] : []),
];

describe.each(servers)('examples/tour.sh against a fresh nomos serve on $name', ({ database }) => {
  let dir: string;
  let peer: SshPeer;
  let testDb: TestDb | null = null;
  let server: Started;
  let url: string;

  const signingKeyIn = async (where: string) => {
    const file = join(where, 'signing-key.pem');
    await writeSigningKey(file, generateSigningKey());
    return file;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nomos-tour-'));
    peer = await startSshPeer();
    const key = join(dir, 'id_ed25519');
    await writeFile(key, peer.privateKey, { mode: 0o600 });
    testDb = database ? await database.open({ migrated: false }) : null;
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    server = nomos(['serve'], {
      PORT: String(port),
      NOMOS_SSH_KEY: key,
      // On PostgreSQL the servers share a signing key given to each (NOMOS_SIGNING_KEY); the embedded default makes its own.
      ...(testDb?.url ? { DATABASE_URL: testDb.url, NOMOS_SIGNING_KEY: await signingKeyIn(dir) } : { NOMOS_DATA_DIR: join(dir, 'data') }),
    });
    await listening(server, port);
  }, 120_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await within(server.exit, 30_000, 'nomos serve stopping').catch(() => killAll());
    }
    killAll();
    await peer?.close();
    await testDb?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs top to bottom, every answer what the README says', async () => {
    // In turn with the other tours: they share the file the tour touches on this machine (./tour-host.ts).
    const tour = startTour('exec bash examples/tour.sh', { NOMOS_URL: url, FLEET_HOST: peer.host.address, FLEET_PORT: String(peer.host.port), FLEET_USER: peer.host.user });
    const exit = await within(tour.exit, 240_000, 'examples/tour.sh');
    const output = tour.output();
    expect(exit.code, `${output}\n--- nomos serve:\n${server.output().slice(-4000)}`).toBe(0);
    expect(output).toMatch(/^tour: done, \d+ checks held$/m);
    expect(output).toContain('"status": "approval_required"');
    expect(output).toContain('"code": "unknown_entity"');
    expect(output).toContain('"reason": "unreachable"');
  }, 300_000);
});
