// A real `nomos serve` child process on the bench database: started, waited for, its peak memory read from
// /proc (VmHWM, the resident high-water mark), and stopped.
import { type ChildProcess, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/nomos.mjs', import.meta.url));

export interface BenchServer {
  readonly base: string;
  readonly pid: number;
  /** Peak resident memory so far, in bytes. */
  peakMemory(): Promise<number>;
  stop(): Promise<void>;
}

/** databaseUrl null: the embedded default, PGlite in `dataDir`. */
export async function startServer(databaseUrl: string | null, port: number, dataDir?: string, extraEnv: Record<string, string> = {}): Promise<BenchServer> {
  // BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the server (written when it stops);
  // BENCH_SERVER_STDOUT=FILE keeps what it prints (its request log, --trace-gc's lines).
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', NOMOS_TOKENS: '', OPENAI_API_KEY: '', OPENAI_BASE_URL: '', ...extraEnv };
  if (databaseUrl === null) {
    delete env.DATABASE_URL;
    if (dataDir !== undefined) env.NOMOS_DATA_DIR = dataDir;
  } else env.DATABASE_URL = databaseUrl;
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, BIN, 'serve'], {
    env,
    stdio: ['ignore', process.env.BENCH_SERVER_STDOUT ? openSync(process.env.BENCH_SERVER_STDOUT, 'w') : 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const pid = child.pid;
  if (pid === undefined) throw new Error('nomos serve did not start');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nomos serve exited with ${child.exitCode}: ${stderr}`);
    const ok = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`nomos serve did not answer /healthz within 60 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    base,
    pid,
    async peakMemory() {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
      if (kb === undefined) throw new Error(`no VmHWM in /proc/${pid}/status`);
      return Number(kb) * 1024;
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
