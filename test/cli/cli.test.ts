// The command line as scripts use it: its version, its verbs, and `nomos classify`'s exit status per verdict;
// the compiled build (dist/, made by `npm ci`) answers as the sources do.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLASSIFY_EXIT, PROJECTION_NAMES } from '../../src/cli/catalog.ts';
import { projections } from '../../src/runtime.ts';

const BIN = fileURLToPath(new URL('../../bin/nomos.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const { version } = (await import('../../package.json', { with: { type: 'json' } })).default as { version: string };

function run(script: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

const verdicts: Array<[string, keyof typeof CLASSIFY_EXIT]> = [
  ['df -h /srv', 'reversible_low'],
  ['systemctl restart rclone-backup.service', 'config_mutation'],
  ['rm -rf /srv/old-backups', 'destructive'],
];

describe('the nomos command line', () => {
  it('prints its version, and its help names every verb', async () => {
    const v = await run(BIN, ['--version']);
    expect(v).toMatchObject({ code: 0, stdout: `${version}\n` });
    const help = await run(BIN, ['--help']);
    expect(help.code).toBe(0);
    for (const verb of ['serve', 'migrate', 'projections', 'fleet', 'chat', 'audit', 'mcp', 'classify']) expect(help.stdout).toMatch(new RegExp(`^  ${verb}\\b`, 'm'));
    const rebuild = await run(BIN, ['projections', 'rebuild', '--help']);
    expect(rebuild.stdout.replace(/\s+/g, ' ')).toContain(PROJECTION_NAMES.join(', '));
  });

  it('names the projections the runtime has', () => {
    expect([...PROJECTION_NAMES]).toEqual(projections.map((p) => p.name));
  });

  it.each(verdicts)('classify %j exits with the status of its verdict (%s)', async (command, verdict) => {
    const result = await run(BIN, ['classify', command]);
    expect(result.code, result.stderr).toBe(CLASSIFY_EXIT[verdict]);
    expect(JSON.parse(result.stdout)).toMatchObject({ risk_class: verdict });
  });

  it('runs from the compiled build as from the sources', async () => {
    expect(existsSync(BUILT), 'dist/ is missing: npm ci builds it (npm run build:cli)').toBe(true);
    for (const [command, verdict] of verdicts) {
      const [built, source] = await Promise.all([run(BUILT, ['classify', command]), run(BIN, ['classify', command], { NOMOS_FROM_SOURCE: '1' })]);
      expect(built.code).toBe(CLASSIFY_EXIT[verdict]);
      expect(built).toEqual(source);
    }
  });
});
