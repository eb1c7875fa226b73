// `nomos serve` behaves like a service, tested on real processes: a port that is taken ends it at once with
// the lock released; SIGTERM or SIGINT to `npm start` leaves nothing running (no orphaned node), the port and
// the data directory free; requests in flight are answered before it exits; a shutdown that cannot finish is
// ended by its deadline, and a second signal ends it at once.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, freePort, killAll, listening, nomos, portInUse, runNomos, start, type Started, until, within } from '../support/cli-process.ts';

let root: string;
let count = 0;
const freshDir = () => join(root, `data-${++count}`);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'nomos-service-'));
});
afterAll(async () => {
  killAll();
  await rm(root, { recursive: true, force: true });
});

/**
 * The pid in the server's "nomos listening" log line: the process that serves, whoever started it. The line is
 * written after the port opens, so a health check can be answered before it reaches the pipe: wait for it.
 */
async function servingPid(started: Started): Promise<number> {
  const line = () => started.output().split('\n').find((l) => l.includes('nomos listening on'));
  await until(() => line() !== undefined, 10_000, 'the "nomos listening on" line').catch(() => {
    throw new Error(`no listening line in:\n${started.output()}`);
  });
  const pid = Number((JSON.parse(line()!) as { pid: unknown }).pid);
  if (!Number.isInteger(pid)) throw new Error(`no pid in the listening line:\n${line()}`);
  return pid;
}

/** A GET that waits on the read models for a position nobody has written, for up to NOMOS_READ_WAIT_MS. */
const waitingRequest = (port: number) =>
  fetch(`http://127.0.0.1:${port}/sessions?min_position=1000000`).then(
    async (res) => ({ status: res.status, body: (await res.json()) as { code?: string } }),
    (error: unknown) => ({ status: 0, body: { code: String(error) } }),
  );

describe('nomos serve as a service', () => {
  it('exits non-zero at once when its port is taken, saying so, and leaves the data directory unlocked', async () => {
    const taken = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      const dir = freshDir();
      const server = nomos(['serve'], { NOMOS_DATA_DIR: dir, PORT: String(port) });
      const exit = await within(server.exit, 60_000, 'serve on a taken port');
      expect(exit.code, server.output()).toBe(1);
      expect(server.output()).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}.*EADDRINUSE`));
      expect(existsSync(join(dir, 'nomos.pid'))).toBe(false);
      // The lock is free: a command that claims the directory runs.
      const status = await runNomos(['projections', 'status'], { NOMOS_DATA_DIR: dir });
      expect(status.code, status.output).toBe(0);
      expect(status.output).toMatch(/^sessions\tv\d+/m);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  }, 120_000);

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to npm start stops npm and the server: nothing left running, port and directory free for the next`, async () => {
      const dir = freshDir();
      const port = await freePort();
      const npm = start('npm', ['start'], { NOMOS_DATA_DIR: dir, PORT: String(port) });
      await listening(npm, port);
      const serverPid = await servingPid(npm);
      expect(serverPid).not.toBe(npm.child.pid);
      process.kill(npm.child.pid!, signal);
      const exit = await within(npm.exit, 10_000, `npm start after ${signal}`);
      expect(exit.code, npm.output()).toBe(0);
      await until(() => !alive(serverPid), 5_000, `the server (pid ${serverPid}) gone`);
      expect(npm.output()).toContain(`${signal}: shutting down`);
      expect(await portInUse(port)).toBe(false);
      expect(existsSync(join(dir, 'nomos.pid'))).toBe(false);
      // A second server starts on the same directory and port.
      const next = nomos(['serve'], { NOMOS_DATA_DIR: dir, PORT: String(port) });
      await listening(next, port);
      next.child.kill('SIGTERM');
      expect((await within(next.exit, 10_000, 'the second server')).code, next.output()).toBe(0);
    }, 180_000);
  }

  it('Ctrl-C under npm start (SIGINT to the whole process group, forwarded again by npm) is one clean shutdown', async () => {
    const port = await freePort();
    const npm = start('npm', ['start'], { NOMOS_DATA_DIR: freshDir(), PORT: String(port) });
    await listening(npm, port);
    const serverPid = await servingPid(npm);
    process.kill(-npm.child.pid!, 'SIGINT');
    const exit = await within(npm.exit, 10_000, 'npm start after Ctrl-C');
    expect(exit.code, npm.output()).toBe(0);
    expect(npm.output()).not.toMatch(/exiting at once/);
    await until(() => !alive(serverPid), 5_000, `the server (pid ${serverPid}) gone`);
  }, 120_000);

  it('answers a request in flight before it exits', async () => {
    const port = await freePort();
    const server = nomos(['serve'], { NOMOS_DATA_DIR: freshDir(), PORT: String(port), NOMOS_READ_WAIT_MS: '1500', NOMOS_SHUTDOWN_MS: '20000' });
    await listening(server, port);
    const inFlight = waitingRequest(port);
    await new Promise((resolve) => setTimeout(resolve, 300));
    server.child.kill('SIGTERM');
    // The route's own answer (the read model never got there), not a connection cut.
    expect(await inFlight).toEqual({ status: 503, body: expect.objectContaining({ code: 'projection_lag' }) });
    expect((await within(server.exit, 10_000, 'serve after SIGTERM')).code, server.output()).toBe(0);
  }, 120_000);

  it('exits non-zero at its deadline when the clean close cannot finish, naming what was still open', async () => {
    const port = await freePort();
    const dir = freshDir();
    const server = nomos(['serve'], { NOMOS_DATA_DIR: dir, PORT: String(port), NOMOS_READ_WAIT_MS: '60000', NOMOS_SHUTDOWN_MS: '1000' });
    await listening(server, port);
    const inFlight = waitingRequest(port);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sent = Date.now();
    server.child.kill('SIGTERM');
    const exit = await within(server.exit, 10_000, 'serve past its deadline');
    expect(exit.code, server.output()).toBe(1);
    expect(Date.now() - sent).toBeGreaterThanOrEqual(1_000);
    expect(server.output()).toMatch(/not finished after 1000 ms \(NOMOS_SHUTDOWN_MS\); exiting with the HTTP server \(requests in flight.*still open/);
    expect(existsSync(join(dir, 'nomos.pid'))).toBe(false);
    expect((await inFlight).status).toBe(0);
  }, 120_000);

  it('logs one line a request, as it is answered: method, url, client, status and time', async () => {
    const port = await freePort();
    const server = nomos(['serve'], { NOMOS_DATA_DIR: freshDir(), PORT: String(port) });
    await listening(server, port);
    const asked = [
      ['/sessions?limit=2', 200],
      ['/no/such/route', 404],
      ['/sessions?limit=0', 400],
    ] as const;
    for (const [url, status] of asked) expect((await fetch(`http://127.0.0.1:${port}${url}`)).status, url).toBe(status);
    server.child.kill('SIGTERM');
    expect((await within(server.exit, 10_000, 'serve after SIGTERM')).code, server.output()).toBe(0);
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; req?: { method: string; url: string; remoteAddress: string }; res?: { statusCode: number }; responseTime?: number });
    expect(lines.filter((l) => l.msg === 'incoming request')).toEqual([]);
    for (const [url, status] of asked) {
      const about = lines.filter((l) => l.req?.url === url);
      expect(about, url).toHaveLength(1);
      expect(about[0]).toMatchObject({ msg: 'request completed', req: { method: 'GET', remoteAddress: '127.0.0.1' }, res: { statusCode: status } });
      expect(about[0]!.responseTime).toBeGreaterThan(0);
    }
  }, 120_000);

  it('exits at once on a second signal', async () => {
    const port = await freePort();
    const server = nomos(['serve'], { NOMOS_DATA_DIR: freshDir(), PORT: String(port), NOMOS_READ_WAIT_MS: '60000', NOMOS_SHUTDOWN_MS: '60000' });
    await listening(server, port);
    void waitingRequest(port);
    await new Promise((resolve) => setTimeout(resolve, 300));
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(server.child.exitCode).toBeNull();
    server.child.kill('SIGTERM');
    const exit = await within(server.exit, 5_000, 'serve after a second SIGTERM');
    expect(exit.code, server.output()).toBe(1);
    expect(server.output()).toContain('SIGTERM again: exiting at once');
  }, 120_000);

  it.runIf(process.env.DATABASE_URL)('stops within its deadline on PostgreSQL after its database was dropped under it (needs DATABASE_URL; skipped without it)', async () => {
    const serverUrl = process.env.DATABASE_URL!;
    const name = `nomos_service_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
      const url = new URL(serverUrl);
      url.pathname = `/${name}`;
      const port = await freePort();
      const server = nomos(['serve'], { DATABASE_URL: url.toString(), PORT: String(port), NOMOS_SHUTDOWN_MS: '3000' });
      await listening(server, port);
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      // Long enough for the projectors to notice and start retrying.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const sent = Date.now();
      server.child.kill('SIGTERM');
      const exit = await within(server.exit, 10_000, 'serve on a dropped database');
      expect(Date.now() - sent).toBeLessThan(3_000 + 2_000);
      // Either way it ended, and if the close did not finish it said what was open.
      if (exit.code !== 0) expect(server.output()).toMatch(/shutdown: (not finished after 3000 ms.*still open|closing .* failed)/);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }, 120_000);
});
