// PGlite is one process's database: a pid file in the data directory keeps a second server or a CLI
// maintenance command from opening the same directory at the same time.
import { readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';

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

export async function claimDataDir(dataDir: string): Promise<() => Promise<void>> {
  await mkdir(dataDir, { recursive: true });
  const holder = await holderOf(dataDir);
  if (holder !== null) throw new Error(`the data directory ${dataDir} is in use by process ${holder}; stop it first (PGlite allows one process)`);
  const file = join(dataDir, 'nomos.pid');
  await writeFile(file, String(process.pid));
  return () => rm(file, { force: true });
}
