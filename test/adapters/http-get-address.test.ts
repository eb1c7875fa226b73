// http_get reaches only the public internet: every address that is not public is refused, in every spelling a
// URL parser or a resolver accepts for it, as a literal host and as a name a real DNS server (on loopback)
// resolves to it, before any connection is made. The spellings are generated from each refused range, not listed.
// No test here connects anywhere but loopback: each generated address is first checked to be one the judgement
// refuses, so a wrong generator fails the test instead of sending a packet out.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipLiteral, whyNotPublic } from '../../src/adapters/http/address.ts';
import { HttpGetRefused, httpReader } from '../../src/adapters/http/fetch-text.ts';
import { type DnsResponder, startDnsResponder } from '../support/dns-responder.ts';

/** A small deterministic generator: the same variants on every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const V4_REFUSED: ReadonlyArray<readonly [string, number, RegExp]> = [
  ['127.0.0.0', 8, /loopback/],
  ['0.0.0.0', 8, /unspecified/],
  ['10.0.0.0', 8, /private/],
  ['172.16.0.0', 12, /private/],
  ['192.168.0.0', 16, /private/],
  ['100.64.0.0', 10, /carrier-grade NAT/],
  ['169.254.0.0', 16, /link-local/],
  ['224.0.0.0', 4, /multicast/],
  ['240.0.0.0', 4, /reserved|broadcast/],
  ['198.18.0.0', 15, /reserved|benchmark/],
  ['192.0.0.0', 24, /reserved/],
  ['192.0.2.0', 24, /reserved/],
  ['198.51.100.0', 24, /reserved/],
  ['203.0.113.0', 24, /reserved/],
  ['255.255.255.255', 32, /broadcast/],
];

const V6_REFUSED: ReadonlyArray<readonly [string, number, RegExp]> = [
  ['::1', 128, /loopback/],
  ['::', 128, /unspecified/],
  ['fe80::', 10, /link-local/],
  ['fc00::', 7, /unique-local/],
  ['ff00::', 8, /multicast/],
  ['2001:db8::', 32, /reserved or documentation/],
  ['fec0::', 10, /site-local/],
  ['100::', 64, /discard/],
  ['2001::', 32, /Teredo|reserved/],
  ['64:ff9b:1::', 48, /local-use NAT64/],
  ['8000::', 2, /outside global unicast/],
];

const toInt = (v4: string) => v4.split('.').reduce((n, o) => n * 256 + Number(o), 0);
const fromInt = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
const hex16 = (v4: string) => {
  const n = toInt(v4);
  return `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
};

/** Addresses of a range: its first and last, and a few drawn at random. */
function samplesV4(base: string, bits: number, next: () => number): string[] {
  const size = 2 ** (32 - bits);
  const start = toInt(base);
  return [...new Set([0, size - 1, ...[0, 1, 2].map(() => Math.floor(next() * size))].map((k) => fromInt(start + k)))];
}

function samplesV6(base: string, bits: number, next: () => number): string[] {
  const parts = expand(base);
  const out = [base];
  for (let n = 0; n < 3 && bits < 128; n++) {
    const p = [...parts];
    // Random bits below the prefix: the whole group past it, and the prefix's own group under its mask.
    for (let g = Math.floor(bits / 16); g < 8; g++) {
      const keep = g === Math.floor(bits / 16) ? bits % 16 : 0;
      const mask = keep === 0 ? 0 : (0xffff << (16 - keep)) & 0xffff;
      p[g] = (p[g]! & mask) | (Math.floor(next() * 0x10000) & ~mask & 0xffff);
    }
    out.push(p.map((x) => x.toString(16)).join(':'));
  }
  return out;
}

function expand(v6: string): number[] {
  const [head, tail] = v6.split('::') as [string, string | undefined];
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  return [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t].map((x) => parseInt(x, 16));
}

/** Every way a URL can spell an IPv4 address: WHATWG's number forms, IDN digits, and the IPv6 forms carrying it. */
function spellingsV4(a: string): string[] {
  const o = a.split('.').map(Number) as [number, number, number, number];
  const n = toInt(a);
  const fullWidth = a.replace(/\d/g, (d) => String.fromCharCode(0xff10 + Number(d)));
  return [
    a,
    `${a}.`,
    String(n),
    `0x${n.toString(16)}`,
    `0X${n.toString(16).toUpperCase()}`,
    `0${n.toString(8)}`,
    o.map((x) => `0${x.toString(8)}`).join('.'),
    o.map((x) => `0x${x.toString(16)}`).join('.'),
    `${o[0]}.${o[1]}.${o[2] * 256 + o[3]}`,
    `${o[0]}.${(o[1] << 16) + o[2] * 256 + o[3]}`,
    fullWidth,
    `[::ffff:${a}]`,
    `[::FFFF:${hex16(a).toUpperCase()}]`,
    `[0:0:0:0:0:ffff:${a}]`,
    // ::0.0.0.1 is ::1, loopback by its own name.
    ...(n > 1 ? [`[::${a}]`] : []),
    `[64:ff9b::${a}]`,
    `[2002:${hex16(a)}::1]`,
  ];
}

function spellingsV6(a: string): string[] {
  const full = expand(a).map((x) => x.toString(16));
  return [`[${a}]`, `[${full.join(':')}]`, `[${full.map((x) => x.padStart(4, '0')).join(':').toUpperCase()}]`];
}

/** The generated refused spellings, each with what its refusal must say; checked refused before any use. */
function refusedHosts(): Array<{ host: string; why: RegExp }> {
  const next = random(32);
  const out: Array<{ host: string; why: RegExp }> = [];
  for (const [base, bits, why] of V4_REFUSED) for (const a of samplesV4(base, bits, next)) for (const host of spellingsV4(a)) out.push({ host, why });
  for (const [base, bits, why] of V6_REFUSED) for (const a of samplesV6(base, bits, next)) for (const host of spellingsV6(a)) out.push({ host, why });
  return out;
}

/** The address a URL with this host would reach; throws (failing the test) unless the judgement refuses it. */
function refusedOrFail(host: string, port: number): string {
  const literal = ipLiteral(new URL(`http://${host}:${port}/`).hostname);
  if (literal === null || whyNotPublic(literal) === null) throw new Error(`generator bug: ${host} is not a refused address; not fetched`);
  return literal;
}

const PUBLIC = ['8.8.8.8', '1.1.1.1', '93.184.215.14', '2606:4700:4700::1111', '2a00:1450:4001:82a::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'];

describe('which addresses are public', () => {
  it('refuses every address of every non-public range, in each IPv6 form that carries an IPv4 one', () => {
    const next = random(7);
    for (const [base, bits, why] of V4_REFUSED) {
      for (const a of samplesV4(base, bits, next)) {
        for (const form of [a, `::ffff:${a}`, `::ffff:${hex16(a)}`, ...(toInt(a) > 1 ? [`::${a}`] : []), `64:ff9b::${a}`, `2002:${hex16(a)}::`]) {
          expect(whyNotPublic(form), form).toMatch(why);
        }
      }
    }
    for (const [base, bits, why] of V6_REFUSED) for (const a of samplesV6(base, bits, next)) expect(whyNotPublic(a), a).toMatch(why);
  });

  it('takes the public internet, IPv4 and IPv6, and NAT64 or 6to4 forms of a public address', () => {
    for (const a of PUBLIC) expect(whyNotPublic(a), a).toBeNull();
  });
});

describe('http_get refuses what is not public, before connecting', () => {
  let trap: Server;
  let port: number;
  let connections = 0;
  let dns: DnsResponder;
  beforeAll(async () => {
    // A server on 127.0.0.1 that no refused URL may reach: every spelling below uses its port.
    trap = createServer((_req, res) => res.end('secret'));
    trap.on('connection', () => connections++);
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    port = (trap.address() as AddressInfo).port;
    dns = await startDnsResponder();
  });
  afterAll(async () => {
    await dns.close();
    await new Promise<void>((resolve) => trap.close(() => resolve()));
  });

  it('refuses each spelling of each refused address as the URL host, naming the address and why', async () => {
    const reader = httpReader();
    const hosts = refusedHosts();
    expect(hosts.length).toBeGreaterThan(400);
    for (const { host, why } of hosts) {
      refusedOrFail(host, port);
      const refusal = await reader.get(`http://${host}:${port}/metrics`).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refusal, host).toBeInstanceOf(HttpGetRefused);
      expect((refusal as Error).message, host).toMatch(why);
      expect((refusal as Error).message).toMatch(/^refused: .+ is .+; http_get only reaches the public internet \(NOMOS_HTTP_GET_ALLOW opens hosts on purpose\)$/);
    }
    expect(connections).toBe(0);
  });

  it('says what was refused as the issue puts it', async () => {
    await expect(httpReader().get(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow(
      'refused: 127.0.0.1 is a loopback address; http_get only reaches the public internet (NOMOS_HTTP_GET_ALLOW opens hosts on purpose)',
    );
    await expect(httpReader().get(`http://[::ffff:127.0.0.1]:${port}/`)).rejects.toThrow('refused: ::ffff:7f00:1 is an IPv4-mapped form of 127.0.0.1, a loopback address;');
    expect(connections).toBe(0);
  });

  it('refuses a name a real DNS server resolves to any refused address (A or AAAA)', async () => {
    const reader = httpReader({ dnsServers: [dns.server] });
    const seen = new Set<string>();
    let i = 0;
    for (const { host, why } of refusedHosts()) {
      const address = refusedOrFail(host, port);
      if (seen.has(address)) continue;
      seen.add(address);
      const name = `n${i++}.refused.test`;
      dns.set(name, [address]);
      await expect(reader.get(`http://${name}:${port}/`), `${name} → ${address}`).rejects.toThrow(new RegExp(`^refused: ${name.replace(/\./g, '\\.')} resolves to [^;]+; .*${why.source}`));
    }
    expect(seen.size).toBeGreaterThan(80);
    expect(connections).toBe(0);
  });

  it('refuses a name with one public and one refused address, whichever comes first', async () => {
    const reader = httpReader({ dnsServers: [dns.server] });
    for (const [name, answers] of [
      ['mixed-a.test', ['93.184.215.14', '10.0.0.7']],
      ['mixed-b.test', ['127.0.0.1', '93.184.215.14']],
      ['mixed-c.test', ['93.184.215.14', '::1']],
      ['mixed-d.test', ['2606:4700:4700::1111', 'fd00::1']],
    ] as const) {
      dns.set(name, answers);
      await expect(reader.get(`http://${name}:${port}/`)).rejects.toThrow(/^refused: .* resolves to .*(private|loopback|unique-local)/);
    }
    expect(connections).toBe(0);
  });

  it('refuses the spellings of a host name for loopback: case, trailing dot, IDN, through DNS and the system resolver', async () => {
    dns.set('localhost', ['127.0.0.1', '::1']);
    const viaDns = httpReader({ dnsServers: [dns.server] });
    for (const host of ['localhost', 'LOCALHOST', 'localhost.', 'LocalHost.', 'ⓛⓞⓒⓐⓛⓗⓞⓢⓣ', 'ｌｏｃａｌｈｏｓｔ']) {
      await expect(viaDns.get(`http://${host}:${port}/`), host).rejects.toThrow(/^refused: localhost\.? resolves to 127\.0\.0\.1, ::1; 127\.0\.0\.1 is a loopback address/);
    }
    // The system resolver (/etc/hosts here) is the default.
    for (const host of ['localhost', 'LOCALHOST', 'ⓛocalhost']) {
      await expect(httpReader().get(`http://${host}:${port}/`), host).rejects.toThrow(/^refused: localhost resolves to [^;]*127\.0\.0\.1[^;]*; .* is a loopback address/);
    }
    expect(connections).toBe(0);
  });

  it('answers a name the DNS server does not know, or never answers, with an error and no connection', async () => {
    await expect(httpReader({ dnsServers: [dns.server] }).get(`http://unknown.test:${port}/`)).rejects.toThrow(/could not resolve unknown\.test: ENOTFOUND/);
    dns.set('silent.test', () => null);
    const started = Date.now();
    await expect(httpReader({ dnsServers: [dns.server], timeoutMs: 300 }).get(`http://silent.test:${port}/`)).rejects.toThrow(/gave up resolving silent\.test/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
