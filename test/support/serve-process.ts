// A real `nomos serve` process for tests of several servers on one PostgreSQL: spawned from bin/nomos.mjs with
// the environment a user would set, waited on until /healthz answers, and stopped with a signal (SIGKILL to
// play a crash). Its output is kept, to print when a test fails.
import { type ChildProcess, spawn } from 'node:child_process';
import { BIN, freePort } from './cli-process.ts';

export interface ServeProcess {
  readonly url: string;
  readonly pid: number;
  readonly process: ChildProcess;
  /** What it printed so far (stdout and stderr). */
  output(): string;
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Sends the signal and waits for the process to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}


export async function startServeProcess(env: Record<string, string>, options: { readyMs?: number } = {}): Promise<ServeProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const url = `http://127.0.0.1:${port}`;
  const request = async (method: string, path: string, body?: unknown) => {
    // X-Nomos-Client: a POST without a JSON body needs it (src/api/origin.ts), as every client of the API sends it.
    const res = await fetch(url + path, { method, headers: { 'x-nomos-client': 'test', ...(body !== undefined && { 'content-type': 'application/json' }) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed };
  };
  const deadline = Date.now() + (options.readyMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nomos serve exited with ${child.exitCode} before it was ready:\n${log}`);
    try {
      if ((await request('GET', '/healthz')).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nomos serve was not ready in time:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid!,
    process: child,
    output: () => log,
    request,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
