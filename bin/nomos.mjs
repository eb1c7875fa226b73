#!/usr/bin/env node
// Runs the bundled CLI (dist/, built from src/ by esbuild in `npm ci`'s prepare, with source maps) when it is at
// least as new as every source file; otherwise (a fresh edit, or no build) the TypeScript itself through tsx,
// which is slower to start but never stale.
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src', import.meta.url));
const BUILT = new URL('../dist/cli/main.js', import.meta.url);

function newestSource() {
  let newest = 0;
  for (const entry of readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(`${entry.parentPath}/${entry.name}`).mtimeMs);
  }
  return newest;
}

function builtAt() {
  try {
    return statSync(BUILT).mtimeMs;
  } catch {
    return -1;
  }
}

if (process.env.NOMOS_FROM_SOURCE !== '1' && builtAt() >= newestSource()) {
  process.setSourceMapsEnabled(true);
  await import(BUILT.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
