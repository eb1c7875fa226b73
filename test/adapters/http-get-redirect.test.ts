// What an operator opens stays the only thing opened: a server on 127.0.0.2, allowed as 127.0.0.2/32 (or by its
// name), is fetched; redirects are followed by hand and each hop judged again, so a hop to 127.0.0.1 is refused
// by number; and the connection goes to the address that was checked, however a real DNS server (rebinding)
// answers the next time it is asked. TLS still verifies the URL's name on a pinned connection.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowList } from '../../src/adapters/http/address.ts';
import { httpReader } from '../../src/adapters/http/fetch-text.ts';
import { type DnsResponder, startDnsResponder } from '../support/dns-responder.ts';

const listen = (server: Server | TlsServer, host: string, port = 0) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
const close = (server: Server | TlsServer) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('http_get follows redirects by hand and connects to what it checked', () => {
  let site: Server;
  let trap: Server;
  let port: number;
  let dns: DnsResponder;
  /** Connections the server on 127.0.0.1 received: none may ever arrive. */
  let trapped = 0;
  const cidr = parseAllowList('127.0.0.2/32');

  beforeAll(async () => {
    site = createServer((req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const to = url.searchParams.get('to');
      const hops = Number(url.searchParams.get('hops') ?? 0);
      if (url.pathname === '/page') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`page from 127.0.0.2 for ${req.headers.host}`);
      } else if (url.pathname === '/chain' && hops > 0) {
        res.writeHead(302, { location: `/chain?hops=${hops - 1}${to ? `&to=${encodeURIComponent(to)}` : ''}` });
        res.end();
      } else if (url.pathname === '/chain' && to) {
        res.writeHead(307, { location: to });
        res.end();
      } else if (url.pathname === '/loop') {
        res.writeHead(301, { location: '/loop' });
        res.end();
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    port = await listen(site, '127.0.0.2');
    // The same port on 127.0.0.1: where a rebinding answer or a redirect would land.
    trap = createServer((_req, res) => res.end('secret from 127.0.0.1'));
    trap.on('connection', () => trapped++);
    await listen(trap, '127.0.0.1', port);
    dns = await startDnsResponder();
  });
  afterAll(async () => {
    await dns.close();
    await close(site);
    await close(trap);
  });

  it('fetches a host opened as a CIDR, and nothing beside it', async () => {
    const page = await httpReader({ allow: cidr }).get(`http://127.0.0.2:${port}/page`);
    expect(page.text).toBe(`page from 127.0.0.2 for 127.0.0.2:${port}`);
    await expect(httpReader({ allow: cidr }).get(`http://127.0.0.1:${port}/page`)).rejects.toThrow(/^refused: 127\.0\.0\.1 is a loopback address/);
    await expect(httpReader({ allow: cidr }).get(`http://[::ffff:127.0.0.1]:${port}/page`)).rejects.toThrow(/^refused: ::ffff:7f00:1 is an IPv4-mapped form of 127\.0\.0\.1/);
    expect(trapped).toBe(0);
  });

  it('follows redirects within what is allowed, relative or absolute', async () => {
    const page = await httpReader({ allow: cidr }).get(`http://127.0.0.2:${port}/chain?hops=3&to=${encodeURIComponent(`http://127.0.0.2:${port}/page`)}`);
    expect(page.url).toBe(`http://127.0.0.2:${port}/page`);
    expect(page.text).toBe(`page from 127.0.0.2 for 127.0.0.2:${port}`);
  });

  it('refuses a redirect chain at the hop that leaves for a refused address, naming the hop', async () => {
    for (const target of [`http://127.0.0.1:${port}/metrics`, `http://2130706433:${port}/metrics`, `http://[::ffff:7f00:1]:${port}/`, `http://0x7f.1:${port}/`]) {
      const canonical = new URL(target).href;
      for (const hops of [0, 2, 4]) {
        await expect(httpReader({ allow: cidr }).get(`http://127.0.0.2:${port}/chain?hops=${hops}&to=${encodeURIComponent(target)}`)).rejects.toThrow(
          `refused: redirect ${hops + 1} to ${canonical}: `,
        );
      }
    }
    dns.set('inside.test', ['127.0.0.1']);
    await expect(
      httpReader({ allow: cidr, dnsServers: [dns.server] }).get(`http://127.0.0.2:${port}/chain?hops=1&to=${encodeURIComponent(`http://inside.test:${port}/`)}`),
    ).rejects.toThrow(`refused: redirect 2 to http://inside.test:${port}/: inside.test resolves to 127.0.0.1; 127.0.0.1 is a loopback address`);
    await expect(httpReader({ allow: cidr }).get(`http://127.0.0.2:${port}/chain?to=${encodeURIComponent('file:///etc/passwd')}`)).rejects.toThrow(
      'refused: redirect to file:///etc/passwd: only http and https',
    );
    expect(trapped).toBe(0);
  });

  it('stops after five redirects', async () => {
    await expect(httpReader({ allow: cidr }).get(`http://127.0.0.2:${port}/loop`)).rejects.toThrow(/^refused: more than 5 redirects/);
  });

  it('connects to the address it checked when DNS answers otherwise the next time (rebinding)', async () => {
    // First answer: the opened server; every later one: loopback.
    dns.set('rebind.test', (nth) => (nth === 1 ? ['127.0.0.2'] : ['127.0.0.1']));
    const reader = httpReader({ allow: cidr, dnsServers: [dns.server] });
    const page = await reader.get(`http://rebind.test:${port}/page`);
    expect(page.text).toBe(`page from 127.0.0.2 for rebind.test:${port}`);
    expect(dns.asked('rebind.test')).toBe(1);
    // The next fetch asks again, is told 127.0.0.1, and refuses.
    await expect(reader.get(`http://rebind.test:${port}/page`)).rejects.toThrow(/^refused: rebind\.test resolves to 127\.0\.0\.1; 127\.0\.0\.1 is a loopback/);
    // A redirect to the same name is a new hop: asked again, judged again.
    dns.set('flip.test', (nth) => (nth === 1 ? ['127.0.0.2'] : ['127.0.0.1']));
    await expect(reader.get(`http://flip.test:${port}/chain?to=${encodeURIComponent(`http://flip.test:${port}/page`)}`)).rejects.toThrow(
      `refused: redirect 1 to http://flip.test:${port}/page: flip.test resolves to 127.0.0.1;`,
    );
    expect(dns.asked('flip.test')).toBe(2);
    expect(trapped).toBe(0);
  });

  it('opens a host by name exactly: its addresses are not judged, other names with the same address are', async () => {
    dns.set('wiki.test', ['127.0.0.2']);
    dns.set('other.test', ['127.0.0.2']);
    dns.set('sub.wiki.test', ['127.0.0.2']);
    const reader = httpReader({ allow: parseAllowList('WIKI.test.'), dnsServers: [dns.server] });
    expect((await reader.get(`http://wiki.test:${port}/page`)).text).toBe(`page from 127.0.0.2 for wiki.test:${port}`);
    expect((await reader.get(`http://Wiki.Test.:${port}/page`)).status).toBe(200);
    await expect(reader.get(`http://other.test:${port}/page`)).rejects.toThrow(/^refused: other\.test resolves to 127\.0\.0\.2; 127\.0\.0\.2 is a loopback/);
    await expect(reader.get(`http://sub.wiki.test:${port}/page`)).rejects.toThrow(/^refused: sub\.wiki\.test/);
    // The opened name's page redirecting to a refused address is still refused.
    await expect(reader.get(`http://wiki.test:${port}/chain?to=${encodeURIComponent(`http://127.0.0.1:${port}/`)}`)).rejects.toThrow(/^refused: redirect 1 to/);
    expect(trapped).toBe(0);
  });
});

describe('http_get over TLS on a pinned connection', () => {
  let dir: string;
  let server: TlsServer;
  let port: number;
  let dns: DnsResponder;
  let cert: Buffer;
  const names: Array<string | undefined> = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nomos-http-get-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=wiki.test',
      '-addext', 'subjectAltName=DNS:wiki.test', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    cert = readFileSync(join(dir, 'cert.pem'));
    server = createTlsServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
      names.push((req.socket as TLSSocket).servername || undefined);
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<p>secure page for ${req.headers.host}</p>`);
    });
    server.on('secureConnection', (socket: Socket) => socket.on('error', () => {}));
    port = await listen(server, '127.0.0.2');
    dns = await startDnsResponder();
    dns.set('wiki.test', ['127.0.0.2']);
    dns.set('impostor.test', ['127.0.0.2']);
  });
  afterAll(async () => {
    await dns.close();
    await close(server);
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the name as TLS server name and Host, and verifies the certificate against it', async () => {
    const reader = httpReader({ allow: parseAllowList('127.0.0.2/32'), dnsServers: [dns.server], ca: cert });
    const page = await reader.get(`https://wiki.test:${port}/`);
    expect(page.text).toBe(`secure page for wiki.test:${port}`);
    expect(names).toEqual(['wiki.test']);
    // The same address under a name the certificate does not carry: the pinned connection still checks the name.
    await expect(reader.get(`https://impostor.test:${port}/`)).rejects.toThrow(/ERR_TLS_CERT_ALTNAME_INVALID/);
  });
});
