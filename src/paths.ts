// Where the files shipped beside the code are (package.json, migrations/, prompts/, web/dist/): found from the
// package's root, the nearest directory above this module that holds a package.json. A module's own URL would
// not do: the same code runs from src/ (tsx, tests) and bundled into dist/ chunks at another depth.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}: nomos's files are not where its code is`);
  }
}

export const PACKAGE_ROOT = packageRoot(dirname(fileURLToPath(import.meta.url)));

/** A path inside the package: `shipped('migrations')`. */
export const shipped = (...parts: string[]): string => join(PACKAGE_ROOT, ...parts);
