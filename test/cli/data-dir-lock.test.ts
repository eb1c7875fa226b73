// Commands that read an embedded data directory refuse one that does not exist or holds no database, naming
// its path, and create nothing; serve and migrate may create it, and after them the readers run.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, runNomos } from '../support/cli-process.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'nomos-data-dir-'));
});
afterAll(async () => {
  killAll();
  await rm(root, { recursive: true, force: true });
});

const readers = [
  ['projections', 'status'],
  ['projections', 'rebuild'],
] as const;

describe('the data directory of CLI commands', () => {
  it.each(readers)('nomos %s %s refuses a data directory that does not exist, naming it, and creates none', async (...args) => {
    const dir = join(root, `missing-${args.join('-')}`);
    const run = await runNomos(args, { NOMOS_DATA_DIR: dir });
    expect(run.code, run.output).toBe(1);
    expect(run.output).toContain(`no data directory at ${dir} (NOMOS_DATA_DIR)`);
    expect(existsSync(dir)).toBe(false);
  }, 60_000);

  it('refuses a directory that holds no database, and writes nothing into it', async () => {
    const dir = join(root, 'empty');
    await mkdir(dir);
    const run = await runNomos(['projections', 'status'], { NOMOS_DATA_DIR: dir });
    expect(run.code, run.output).toBe(1);
    expect(run.output).toContain(`${dir} (NOMOS_DATA_DIR) holds no Nomos database`);
    expect(await readdir(dir)).toEqual([]);
  }, 60_000);

  it('with no NOMOS_DATA_DIR, refuses the default ./.nomos of where it runs rather than creating it', async () => {
    const cwd = join(root, 'cwd');
    await mkdir(cwd);
    // An empty NOMOS_DATA_DIR counts as unset (src/config.ts): the default, relative to where it runs.
    const run = await runNomos(['projections', 'status'], { NOMOS_DATA_DIR: '' }, 60_000, cwd);
    expect(run.code, run.output).toBe(1);
    expect(run.output).toContain(`no data directory at ${join(cwd, '.nomos')}`);
    expect(existsSync(join(cwd, '.nomos'))).toBe(false);
  }, 60_000);

  it('migrate creates the directory, and then the readers run on it', async () => {
    const dir = join(root, 'made');
    const migrated = await runNomos(['migrate'], { NOMOS_DATA_DIR: dir });
    expect(migrated.code, migrated.output).toBe(0);
    const status = await runNomos(['projections', 'status'], { NOMOS_DATA_DIR: dir });
    expect(status.code, status.output).toBe(0);
    expect(status.output).toMatch(/^sessions\tv\d+\t\S+\tposition 0\tlag 0/m);
    expect(existsSync(join(dir, 'nomos.pid'))).toBe(false);
  }, 120_000);
});
