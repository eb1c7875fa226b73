// http_get reads a page from a real (local) HTTP server: scripts and markup stripped, 8 KiB at most, cut marked.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpReader, readableText } from '../../src/adapters/http/fetch-text.ts';

describe('http_get', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/page') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<html><head><style>p{}</style><script>alert("x")</script></head><body><h1>TypeType</h1><p>Self-hosted &amp; fast.</p></body></html>');
      } else if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('word '.repeat(10_000));
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not here');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('strips scripts, styles and markup', async () => {
    const page = await httpReader().get(`${base}/page`);
    expect(page.status).toBe(200);
    expect(page.text).toBe('TypeType\nSelf-hosted & fast.');
  });

  it('cuts long text to 8 KiB and says so', async () => {
    const page = await httpReader().get(`${base}/big`);
    expect(new TextEncoder().encode(page.text).byteLength).toBeLessThan(8 * 1024 + 100);
    expect(page.text).toMatch(/\[cut: \d+ bytes of text, first 8192 shown\]$/);
  });

  it('reports the status of a missing page and refuses other schemes', async () => {
    expect((await httpReader().get(`${base}/missing`)).status).toBe(404);
    await expect(httpReader().get('file:///etc/passwd')).rejects.toThrow(/only http and https/);
  });

  it('keeps plain text as it is, whitespace tidied', () => {
    expect(readableText('a   b\n\n\n\nc', 'text/plain')).toBe('a b\n\nc');
  });
});
