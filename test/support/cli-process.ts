// The real `nomos` CLI (or `npm start`) in a child process, for tests of how the process behaves as a service:
// its output, how it exits, and whether anything it started outlives it. Every child is tracked so that
// killAll() in afterAll ends whatever a failed test left running.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = fileURLToPath(new URL('../../bin/nomos.mjs', import.meta.url));

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface Started {
  readonly child: ChildProcess;
  /** Everything written so far to stdout and stderr, interleaved as it arrived. */
  output(): string;
  /** Settles when the process has ended, however it ended. */
  readonly exit: Promise<Exit>;
}

const running = new Set<ChildProcess>();

/**
 * The environment of a child: this one's without the settings a test run may carry (DATABASE_URL, tokens, a
 * model provider), so the child sees only what `env` gives it.
 */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(DATABASE_URL|EVENTSTORE_URL|NOMOS_|OPENAI_|PORT$|HOST$|npm_)/.test(key)));
  return { ...base, ...env };
}

/** `command args` (in the checkout unless `cwd`); detached, so that it leads a process group killAll can end as a whole. */
export function start(command: string, args: readonly string[], env: Record<string, string>, cwd = REPO): Started {
  const child = spawn(command, args, { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running.add(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<Exit>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });
  return { child, output: () => output, exit };
}

export const nomos = (args: readonly string[], env: Record<string, string>, cwd = REPO): Started => start(process.execPath, [BIN, ...args], env, cwd);

/**
 * Runs `nomos args` to its end with this process's environment and `env` over it, stdout and stderr apart (for
 * commands whose output a test parses); killed after 60 s.
 */
export function execNomos(args: readonly string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Runs `nomos args` to its end; fails if it takes longer than `ms` (killAll then ends it). */
export async function runNomos(args: readonly string[], env: Record<string, string>, ms = 60_000, cwd = REPO): Promise<Exit & { output: string }> {
  const started = nomos(args, env, cwd);
  const exit = await within(started.exit, ms, `nomos ${args.join(' ')}`);
  return { ...exit, output: started.output() };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILL to every child still running and its process group. */
export function killAll(): void {
  for (const child of running) {
    if (child.pid === undefined) continue;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Whether something listens on the port (a listen of ours there fails). */
export async function portInUse(port: number): Promise<boolean> {
  const server = createServer();
  const free = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (free) await new Promise<void>((resolve) => server.close(() => resolve()));
  return !free;
}

export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not done after ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Polls `check` every 100 ms until it holds, at most `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not so after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the server on `port` answers /healthz, or `started` exits (which fails with its output). */
export async function listening(started: Started, port: number, ms = 90_000): Promise<void> {
  let ended = false;
  void started.exit.then(() => (ended = true));
  await until(
    async () => {
      if (ended) throw new Error(`the server exited before it listened:\n${started.output()}`);
      const res = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null);
      return res?.status === 200;
    },
    ms,
    `a server on port ${port}`,
  );
}
