// The README's tour as a reader without Proxmox runs it: examples/sandbox/start.sh starts a real OpenSSH server
// on loopback with the pct and qm stand-ins on its PATH; its exports (eval'd by bash, as the README says) give
// `nomos serve` its key and the tour its host; the tour runs unchanged, every step reaching the sandbox (the
// container's commands through the pct stand-in), the refusals it shows on purpose saying so; then
// `start.sh stop` ends the sshd and removes its state, keys included.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, type Started, alive, freePort, killAll, listening, nomos, portInUse, within } from '../support/cli-process.ts';
import { startTour } from './tour-host.ts';

const SSHD = ['/usr/sbin/sshd', '/usr/local/sbin/sshd'].find((path) => existsSync(path));
const run = promisify(execFile);

/** Whether process `pid` runs: exists and is no zombie (a stopped sshd waits for init to reap it). */
function running(pid: number): boolean {
  if (!alive(pid) || !existsSync('/proc/self/stat')) return alive(pid);
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false; // reaped meanwhile
  }
}

/** `bash -c script` with the sandbox's settings, its stdout and stderr apart; rejects on a non-zero exit. */
function sh(script: string, env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  return run('bash', ['-c', script], { cwd: REPO, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, timeout: 30_000 });
}

describe.skipIf(!SSHD)(`examples/tour.sh against examples/sandbox (skipped without OpenSSH's sshd)`, () => {
  let dir: string;
  let sandbox: Record<string, string>;
  let settings: Record<string, string>;
  let server: Started;
  let url: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nomos-tour-sandbox-'));
    settings = { NOMOS_SANDBOX_DIR: join(dir, 'sandbox'), NOMOS_SANDBOX_PORT: String(await freePort()) };
    // What the README says to type, and what it leaves set.
    const started = await sh('eval "$(examples/sandbox/start.sh)" && jq -n env', settings);
    const env = JSON.parse(started.stdout) as Record<string, string>;
    sandbox = Object.fromEntries(Object.entries(env).filter(([key]) => /^(NOMOS_SSH_KEY|FLEET_|NOMOS_SANDBOX_)/.test(key)));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    server = nomos(['serve'], { PORT: String(port), NOMOS_SSH_KEY: sandbox.NOMOS_SSH_KEY ?? '', NOMOS_DATA_DIR: join(dir, 'data') });
    await listening(server, port);
  }, 120_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await within(server.exit, 30_000, 'nomos serve stopping').catch(() => killAll());
    }
    killAll();
    // The sandbox outlives a failed test otherwise: its sshd leads its own session.
    if (settings) await sh('examples/sandbox/start.sh stop', settings).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it('prints what the tour needs: a key, a loopback host and port, a user, and a fleet file for nomos fleet import', async () => {
    expect(sandbox).toMatchObject({ FLEET_HOST: '127.0.0.1', FLEET_PORT: settings.NOMOS_SANDBOX_PORT, NOMOS_SANDBOX_DIR: settings.NOMOS_SANDBOX_DIR });
    expect(sandbox.FLEET_USER).toBe((await sh('id -un', {})).stdout.trim());
    expect(await readFile(sandbox.NOMOS_SSH_KEY ?? '', 'utf8')).toContain('OPENSSH PRIVATE KEY');
    const fleet = YAML.parse(await readFile(sandbox.NOMOS_SANDBOX_FLEET ?? '', 'utf8')) as unknown;
    expect(fleet).toEqual({
      entities: [
        { slug: 'host:sandbox', type: 'host', ssh: { host: '127.0.0.1', port: Number(settings.NOMOS_SANDBOX_PORT), user: sandbox.FLEET_USER } },
        { slug: 'lxc:sandbox', type: 'lxc', parent: 'host:sandbox', pve_id: 132 },
      ],
    });
  });

  it('runs the tour unchanged, each step on the sandbox, the refusals it shows on purpose saying so', async () => {
    // As in a second terminal: start.sh again finds the sandbox running and prints the same settings.
    const tour = startTour('eval "$(examples/sandbox/start.sh)" && exec bash examples/tour.sh', { ...settings, NOMOS_URL: url });
    const exit = await within(tour.exit, 240_000, 'examples/tour.sh');
    const output = tour.output();
    expect(exit.code, `${output}\n--- nomos serve:\n${server.output().slice(-4000)}`).toBe(0);
    expect(output).toMatch(/^tour: done, \d+ checks held$/m);
    expect(output).toContain(`sandbox: already running on 127.0.0.1:${settings.NOMOS_SANDBOX_PORT}`);
    // The container's command went through the pct stand-in: /proc/meminfo of this machine, as pct exec 132.
    expect(output).toMatch(/"stdout": "MemTotal: +\d+ kB\\n"/);
    const calls = await readFile(join(settings.NOMOS_SANDBOX_DIR ?? '', 'stand-ins.log'), 'utf8');
    expect(calls).toMatch(/^pct exec 132 -- sh -c .*grep MemTotal \/proc\/meminfo/m);
    expect(calls).toMatch(/^pct exec 132 -- sh -c .*ls -la \/tmp\/nomos-tour/m);
    // Each refusal the tour provokes says it is meant, and no error of curl's is left for a reader to puzzle over.
    for (const status of ['403', '409', '404']) expect(output).toMatch(new RegExp(`^tour: ok: .*${status}, as intended`, 'm'));
    expect(output).toMatch(/^tour: ok: a host nothing answers on .* refused as unreachable, as intended$/m);
    expect(output).toMatch(/^tour: ok: the change stream \(ended after its 2 s by curl -m 2, as intended\)$/m);
    expect(output).not.toMatch(/^curl: \(\d+\)/m);
  }, 300_000);

  it('stops: the sshd ends, its port closes, its state (keys included) is gone, and status says not running', async () => {
    const pid = Number(await readFile(join(settings.NOMOS_SANDBOX_DIR ?? '', 'sshd.pid'), 'utf8'));
    expect(running(pid)).toBe(true);
    const stopped = await sh('examples/sandbox/start.sh stop', settings);
    expect(stopped.stderr).toContain(`sandbox: stopped sshd (pid ${pid})`);
    expect(running(pid)).toBe(false);
    expect(await portInUse(Number(settings.NOMOS_SANDBOX_PORT))).toBe(false);
    expect(existsSync(settings.NOMOS_SANDBOX_DIR ?? '')).toBe(false);
    const status = await sh('examples/sandbox/start.sh status', settings).then(
      () => 0,
      (error: { code?: number }) => error.code,
    );
    expect(status).toBe(3);
  });
});
