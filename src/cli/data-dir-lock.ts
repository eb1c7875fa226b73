// PGlite is one process's database: a pid file in the data directory keeps a second server or a CLI
// maintenance command from opening the same directory at the same time.
import { rmSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function holderOf(dataDir: string): Promise<number | null> {
  const text = await readFile(join(dataDir, 'nomos.pid'), 'utf8').catch(() => null);
  const pid = Number(text);
  return text !== null && Number.isInteger(pid) && pid !== process.pid && alive(pid) ? pid : null;
}

/**
 * Refuses a data directory that holds no database: a command that only reads one would otherwise create an
 * empty one where it was started and report on that.
 */
async function requireDatabase(dataDir: string): Promise<void> {
  const where = resolve(dataDir);
  const isDir = await stat(dataDir).then((s) => s.isDirectory(), () => false);
  if (!isDir) throw new Error(`no data directory at ${where} (NOMOS_DATA_DIR): set NOMOS_DATA_DIR to the server's, or DATABASE_URL; 'nomos serve' or 'nomos migrate' creates one`);
  const isDatabase = await stat(join(dataDir, 'PG_VERSION')).then((s) => s.isFile(), () => false);
  if (!isDatabase) throw new Error(`${where} (NOMOS_DATA_DIR) holds no Nomos database: set NOMOS_DATA_DIR to the server's data directory, or DATABASE_URL`);
}

export interface ClaimOptions {
  /** Whether a missing directory is made: only for commands that set a database up (serve, migrate). */
  readonly create: boolean;
}

/**
 * Takes the directory for this process and returns its release. The pid file goes with the process however
 * it exits (a shutdown past its deadline exits without releasing); a holder that died without exiting leaves
 * a pid that no longer runs, which the next claim does not count.
 */
export async function claimDataDir(dataDir: string, options: ClaimOptions): Promise<() => Promise<void>> {
  if (options.create) await mkdir(dataDir, { recursive: true });
  else await requireDatabase(dataDir);
  const holder = await holderOf(dataDir);
  if (holder !== null) throw new Error(`the data directory ${resolve(dataDir)} is in use by process ${holder}; stop it first (PGlite allows one process)`);
  const file = join(dataDir, 'nomos.pid');
  await writeFile(file, String(process.pid));
  const onExit = () => rmSync(file, { force: true });
  process.once('exit', onExit);
  return async () => {
    process.removeListener('exit', onExit);
    await rm(file, { force: true });
  };
}
