// Point 9 of issue 32: tokens shorter than 32 characters stop the start naming the entry; repeated wrong tokens
// from one address are slowed (429) while a right token from another address is not; NOMOS_TLS_CERT/KEY serve
// HTTPS; plain HTTP on a non-loopback address logs a loud warning.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREE_FAILURES } from '../../src/api/auth-throttle.ts';
import { parseTokens } from '../../src/api/auth.ts';
import { freePort, killAll, nomos, runNomos } from '../support/cli-process.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const GOOD = 'op-secret-1-long-enough-for-32-chars';
const scratch = mkdtempSync(join(tmpdir(), 'nomos-credentials-'));
afterAll(() => {
  killAll();
  rmSync(scratch, { recursive: true, force: true });
});

function get(url: string, path: string, headers: Record<string, string>, localAddress?: string): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path, headers, ...(localAddress && { localAddress }) }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('token length at start', () => {
  it('refuses a token shorter than 32 characters, naming the entry and not the token', async () => {
    const exit = await runNomos(['serve'], { NOMOS_DATA_DIR: join(scratch, 'short'), PORT: '0', NOMOS_TOKENS: `operator:alice:${GOOD},agent:bot:tooshort123` });
    expect(exit.code).not.toBe(0);
    expect(exit.output).toMatch(/NOMOS_TOKENS entry 2 \(agent:bot\) has a token of 11 characters; tokens need 32 or more/);
    expect(exit.output).not.toContain('tooshort123');
  });
});

describe.each(databases)('auth throttle on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database, { tokens: parseTokens(`operator:alice:${GOOD}`) });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('slows an address that keeps sending wrong tokens, and not another address with the right one', async () => {
    const wrong = { authorization: 'Bearer wrong-token-wrong-token-wrong-token' };
    const statuses: number[] = [];
    for (let i = 0; i < FREE_FAILURES + 1; i++) statuses.push(await get(server.url, '/sessions', wrong, '127.0.0.1'));
    expect(statuses.slice(0, FREE_FAILURES)).toEqual(Array(FREE_FAILURES).fill(401));
    expect(statuses.at(-1)).toBe(429);
    // Blocked even with the right token from the same address, while the block lasts.
    expect(await get(server.url, '/sessions', { authorization: `Bearer ${GOOD}` }, '127.0.0.1')).toBe(429);
    expect(await get(server.url, '/sessions', { authorization: `Bearer ${GOOD}` }, '127.0.0.2')).toBe(200);
  });
});

describe('TLS and the plain-HTTP warning', () => {
  it('serves HTTPS with NOMOS_TLS_CERT and NOMOS_TLS_KEY', async () => {
    const cert = join(scratch, 'cert.pem');
    const key = join(scratch, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost'], { stdio: 'ignore' });
    const port = await freePort();
    const started = nomos(['serve'], { NOMOS_DATA_DIR: join(scratch, 'tls'), PORT: String(port), HOST: '127.0.0.1', NOMOS_TLS_CERT: cert, NOMOS_TLS_KEY: key });
    const status = async () =>
      new Promise<number>((resolve) => {
        const req = httpsRequest({ host: '127.0.0.1', port, path: '/healthz', rejectUnauthorized: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', () => resolve(0));
        req.end();
      });
    let seen = 0;
    for (let i = 0; i < 120 && seen === 0; i++) {
      seen = await status();
      if (seen === 0) await new Promise((r) => setTimeout(r, 250));
    }
    expect(seen, started.output()).toBe(200);
    // Plain HTTP on the same port is not answered as HTTP.
    expect(await get(`http://127.0.0.1:${port}`, '/healthz', {}).catch(() => 0)).not.toBe(200);
    expect(started.output()).not.toMatch(/PLAIN HTTP/);
    started.child.kill('SIGTERM');
    await started.exit;
  }, 60_000);

  it('warns loudly when plain HTTP listens on a non-loopback address', async () => {
    const port = await freePort();
    const started = nomos(['serve'], { NOMOS_DATA_DIR: join(scratch, 'wide'), PORT: String(port), HOST: '0.0.0.0', NOMOS_TOKENS: `operator:alice:${GOOD}` }); // with auth off the server keeps to loopback
    for (let i = 0; i < 120 && !/PLAIN HTTP ON A NON-LOOPBACK ADDRESS \(0\.0\.0\.0\)/.test(started.output()); i++) await new Promise((r) => setTimeout(r, 250));
    expect(started.output()).toMatch(/PLAIN HTTP ON A NON-LOOPBACK ADDRESS \(0\.0\.0\.0\)/);
    started.child.kill('SIGTERM');
    await started.exit;
  }, 60_000);
});
