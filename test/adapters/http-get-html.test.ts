// HTML to text in time proportional to the page: the classes of page that made the old converter quadratic
// (unclosed tags, "<" without ">", unclosed comments, deep nesting, entities, long text) at the largest body
// http_get reads, each under a generous bound; a 320 KiB such page fetched while a server beside it keeps
// answering /healthz; and the conversion's own bounds on text and time.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowList } from '../../src/adapters/http/address.ts';
import { httpReader } from '../../src/adapters/http/fetch-text.ts';
import { htmlToText } from '../../src/adapters/http/html-text.ts';

const KiB = 1024;
const fill = (unit: string, bytes: number) => unit.repeat(Math.ceil(bytes / unit.length));
const open = { maxChars: 64 * KiB, maxMs: 60_000 };

/** Page classes, each a unit repeated: what a tag, comment, entity or text run costs when nothing closes it. */
const UNITS: Record<string, string> = {
  'unclosed <script>': '<script>',
  'unclosed <style': '<style ',
  '"<" without ">"': '<a ',
  'unclosed comment': '<!--',
  'unclosed attribute quote': '<a b="',
  'nested <div>': '<div>',
  'nested inline <b><i>': '<b><i>',
  'nested <table><tr><td>': '<table><tr><td>',
  'nested <ul><li>': '<ul><li>',
  'nested <svg> (skipped content)': '<svg>',
  'nested <pre>': '<pre>x',
  'close tags of nothing': '</x>',
  'entities': '&amp;&#x1F600;&lt;&nbsp;&notin;&#99999999;',
  'bare ampersands': '&',
  'words': 'word ',
  'one long word': 'x',
};

describe('HTML to text', () => {
  it('keeps the text, in lines where blocks are, and drops code, styles and pictures', async () => {
    const html =
      '<html><head><title>T</title><style>p{}</style><script>if (a</div>) x()</script></head><body><h1>Type<b>Type</b></h1>' +
      '<p>Self-hosted &amp;   <em>fast</em>.</p><ul><li>one<li>two</ul><svg><text>no</text><svg>no</svg></svg><svg/>yes' +
      '<pre>a\n  b</pre>x<br>y &copy;&#169;<![CDATA[cd]]><!-- hidden --> done<noscript>no</noscript><template>no</template></body></html>';
    expect((await htmlToText(html, open)).text).toBe('T\nTypeType\nSelf-hosted & fast.\none\ntwo\nyes\na\n  b\nx\ny ©©cd done');
  });

  it('hides the rest of a page after a tag whose content is never shown and never closed, as a browser does', async () => {
    expect((await htmlToText('<p>before</p><script>alert(1)<p>after</p>', open)).text).toBe('before');
  });

  it.each(Object.entries(UNITS))('converts 2 MiB of %s quickly', async (_name, unit) => {
    const html = `<p>start</p>${fill(unit, 2048 * KiB)}`;
    const started = performance.now();
    const converted = await htmlToText(html, open);
    // The old converter took minutes on 320 KiB of some of these; a linear one takes milliseconds per MiB.
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(converted.text.length).toBeLessThanOrEqual(open.maxChars);
  });

  it('stops at the bound on text, and at the bound on time, saying which', async () => {
    const words = fill('word ', 2048 * KiB);
    const bySize = await htmlToText(words, { maxChars: 1000, maxMs: 60_000 });
    expect(bySize).toEqual({ text: 'word '.repeat(200).trimEnd(), stopped: 'size' });
    const byTime = await htmlToText(words, { maxChars: 10 * 1024 * KiB, maxMs: 0 });
    expect(byTime.stopped).toBe('time');
    expect(byTime.text.length).toBeLessThan(words.length / 2);
  });
});

describe('http_get on an adversarial page', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const page = fill('<a ', 320 * KiB);
    server = createServer((req, res) => {
      if (req.url === '/healthz') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      } else {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(page);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
    base = `http://127.0.0.2:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reads a 320 KiB page of unclosed tags while the server beside it keeps answering', async () => {
    let done = false;
    const latencies: number[] = [];
    const probe = (async () => {
      while (!done) {
        const started = performance.now();
        const res = await fetch(`${base}/healthz`);
        await res.text();
        latencies.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const started = performance.now();
    const page = await httpReader({ allow: parseAllowList('127.0.0.2/32') }).get(`${base}/page`);
    const took = performance.now() - started;
    done = true;
    await probe;
    expect(page.status).toBe(200);
    expect(took).toBeLessThan(5_000);
    expect(latencies.length).toBeGreaterThan(0);
    expect(Math.max(...latencies)).toBeLessThan(500);
  }, 20_000);
});
