// http_get reads a page from a real HTTP server on 127.0.0.2, opened on purpose (NOMOS_HTTP_GET_ALLOW's
// 127.0.0.2/32): scripts and markup stripped, 8 KiB at most, every cut marked, within bounds on time and size.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowList } from '../../src/adapters/http/address.ts';
import { httpReader } from '../../src/adapters/http/fetch-text.ts';
import { plainText } from '../../src/adapters/http/html-text.ts';
import { loadConfig } from '../../src/config.ts';

const allow = parseAllowList('127.0.0.2/32');

describe('http_get', () => {
  let server: Server;
  let base: string;
  /** Responses the trickling route left open, ended after the test. */
  const open: ServerResponse[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/page') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<html><head><style>p{}</style><script>alert("x")</script></head><body><h1>TypeType</h1><p>Self-hosted &amp; fast.</p></body></html>');
      } else if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('word '.repeat(10_000));
      } else if (req.url === '/endless') {
        // A body that never ends: only the bound on what is read stops the reading.
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.from('endless '.repeat(8192));
        const more = () => {
          while (res.write(chunk));
        };
        res.on('drain', more);
        more();
        open.push(res);
      } else if (req.url === '/trickle') {
        // Headers at once, then a byte now and then for ever: only the total time bound ends it.
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => res.write('.'), 50);
        res.on('close', () => clearInterval(timer));
        open.push(res);
      } else if (req.url === '/bomb') {
        // 64 MiB of zeros in about 64 KiB: the bound counts what the body decompresses to.
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        res.end(gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x61)));
      } else if (req.url === '/latin1') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' });
        res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      } else if (req.url === '/picture') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(Buffer.alloc(1000, 0x89));
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not here');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
    base = `http://127.0.0.2:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const res of open) res.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('strips scripts, styles and markup', async () => {
    const page = await httpReader({ allow }).get(`${base}/page`);
    expect(page.status).toBe(200);
    expect(page.text).toBe('TypeType\nSelf-hosted & fast.');
  });

  it('cuts long text to 8 KiB and says so', async () => {
    const page = await httpReader({ allow }).get(`${base}/big`);
    expect(new TextEncoder().encode(page.text).byteLength).toBeLessThan(8 * 1024 + 100);
    expect(page.text).toMatch(/\[cut: 49999 bytes of text, first 8192 shown\]$/);
  });

  it('reports the status of a missing page and refuses other schemes and credentials', async () => {
    expect((await httpReader({ allow }).get(`${base}/missing`)).status).toBe(404);
    await expect(httpReader({ allow }).get('file:///etc/passwd')).rejects.toThrow(/only http and https/);
    await expect(httpReader({ allow }).get(`http://user:secret@127.0.0.2:1/`)).rejects.toThrow(/refused: .*carrying credentials/);
  });

  it('stops reading a body past the size bound, and says the page was cut', async () => {
    const started = Date.now();
    const page = await httpReader({ allow, maxBodyBytes: 256 * 1024 }).get(`${base}/endless`);
    expect(page.text).toMatch(/\[cut: the page is larger than 262144 bytes; only the first 262144 were read\]$/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('counts a compressed body by what it decompresses to', async () => {
    const page = await httpReader({ allow, maxBodyBytes: 1024 * 1024 }).get(`${base}/bomb`);
    expect(page.text.startsWith('aaaa')).toBe(true);
    expect(page.text).toMatch(/\[cut: more than \d+ bytes of text, first 8192 shown\]\n\[cut: the page is larger than 1048576 bytes; only the first 1048576 were read\]$/);
  });

  it('gives up when connection, headers and body together pass the time bound', async () => {
    const started = Date.now();
    await expect(httpReader({ allow, timeoutMs: 500 }).get(`${base}/trickle`)).rejects.toThrow(/gave up on .*\/trickle after 500 ms/);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('decodes the charset the server names, and does not show what is not text', async () => {
    expect((await httpReader({ allow }).get(`${base}/latin1`)).text).toBe('café');
    const picture = await httpReader({ allow }).get(`${base}/picture`);
    expect(picture.text).toBe('[not shown: image/png is not text]');
  });

  it('keeps plain text as it is, whitespace tidied', () => {
    expect(plainText('a   b\n\n\n\nc', { maxChars: 100 }).text).toBe('a b\n\nc');
  });

  it('takes what it opens from NOMOS_HTTP_GET_ALLOW, and refuses a start with an entry it cannot read', async () => {
    const config = loadConfig({ NOMOS_HTTP_GET_ALLOW: ' 127.0.0.2/32 , wiki.lan ' });
    expect((await httpReader({ allow: config.httpGetAllow }).get(`${base}/page`)).status).toBe(200);
    expect([...config.httpGetAllow.names]).toEqual(['wiki.lan']);
    expect(loadConfig({}).httpGetAllow.ranges).toEqual([]);
    for (const bad of ['10.0.0.0/33', 'http://wiki.lan/', 'wiki.lan/8', 'a b']) {
      expect(() => loadConfig({ NOMOS_HTTP_GET_ALLOW: bad })).toThrow(/NOMOS_HTTP_GET_ALLOW: ".*"/);
    }
  });
});
