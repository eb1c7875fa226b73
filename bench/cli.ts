// How long the command line takes to start, as a user waits for it: `nomos --help` and `nomos classify` (wall time,
// the median of several runs), and `nomos serve` from spawn to its first /healthz answer on an embedded data
// directory that already exists (the median of several starts after the first).
import { spawn, execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/nomos.mjs', import.meta.url));

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function wall(args: string[]): Promise<number> {
  const began = performance.now();
  return new Promise((resolve, reject) => {
    // classify exits 0, 3 or 4 by verdict: any of those is a run that worked.
    execFile(process.execPath, [BIN, ...args], { timeout: 60_000 }, (error) => {
      if (error !== null && ![3, 4].includes(Number(error.code))) reject(new Error(`nomos ${args.join(' ')} failed: ${error.message}`));
      else resolve(performance.now() - began);
    });
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Spawn to the first 200 from /healthz, polled every 10 ms; then SIGTERM and wait for the exit. */
async function serveToHealthz(dataDir: string): Promise<number> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', NOMOS_DATA_DIR: dataDir, NOMOS_TOKENS: '', OPENAI_API_KEY: '' };
  delete env.DATABASE_URL;
  const began = performance.now();
  const child = spawn(process.execPath, [BIN, 'serve'], { env, stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`nomos serve exited with ${child.exitCode}`);
      if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) return performance.now() - began;
      if (performance.now() - began > 60_000) throw new Error('nomos serve did not answer /healthz within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

export interface CliStart {
  readonly helpMs: number;
  readonly classifyMs: number;
  /** The first start on an empty directory creates and migrates the database; the figure is the median of the starts after it. */
  readonly serveFirstMs: number;
  readonly serveExistingMs: number;
}

export async function measureCliStart(runs = 5): Promise<CliStart> {
  const help: number[] = [];
  const classify: number[] = [];
  for (let i = 0; i < runs; i++) {
    help.push(await wall(['--help']));
    classify.push(await wall(['classify', 'rm -rf /srv/old-backups']));
  }
  const dir = await mkdtemp(join(tmpdir(), 'nomos-bench-cli-'));
  try {
    const serveFirstMs = await serveToHealthz(join(dir, 'data'));
    const serveExisting: number[] = [];
    for (let i = 0; i < runs; i++) serveExisting.push(await serveToHealthz(join(dir, 'data')));
    return { helpMs: median(help), classifyMs: median(classify), serveFirstMs, serveExistingMs: median(serveExisting) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
