// http_get for the agent: one GET with a bounded time, a bounded body, and at most 8 KiB of readable text
// back — scripts, styles and markup stripped — so a web page costs the model little and runs nothing.
import type { WebReader } from '../../ports/web.ts';

const MAX_TEXT = 8 * 1024;
const MAX_BODY = 2 * 1024 * 1024;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Readable text of an HTML (or plain) body. */
export function readableText(body: string, contentType: string): string {
  if (!/html|xml/i.test(contentType)) return body.replace(/[ \t]+/g, ' ').replace(/\n{3,}/g, '\n\n').trim();
  return body
    .replace(/<(script|style|noscript|template|svg)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(br|\/p|\/div|\/li|\/h[1-6]|\/tr)\b[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (m, e: string) => {
      if (e.startsWith('#x') || e.startsWith('#X')) return String.fromCodePoint(parseInt(e.slice(2), 16));
      if (e.startsWith('#')) return String.fromCodePoint(parseInt(e.slice(1), 10));
      return ENTITIES[e.toLowerCase()] ?? m;
    })
    .replace(/[ \t\r\f\v]+/g, ' ')
    .replace(/ *\n[ \n]*/g, '\n')
    .trim();
}

export function httpReader(options: { timeoutMs?: number } = {}): WebReader {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return {
    async get(url: string) {
      const parsed = new URL(url);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`only http and https URLs can be fetched, not ${parsed.protocol}`);
      const response = await fetch(parsed, { method: 'GET', redirect: 'follow', signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'text/html, text/plain, application/json;q=0.9, */*;q=0.5' } });
      const contentType = response.headers.get('content-type') ?? '';
      let body = '';
      if (response.body) {
        const decoder = new TextDecoder();
        let read = 0;
        for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
          read += chunk.byteLength;
          body += decoder.decode(chunk, { stream: true });
          if (read >= MAX_BODY) break;
        }
      }
      const text = readableText(body, contentType);
      const bytes = new TextEncoder().encode(text);
      const cut = bytes.byteLength > MAX_TEXT;
      const shown = cut ? new TextDecoder().decode(bytes.slice(0, MAX_TEXT)).replace(/\uFFFD$/, '') : text;
      return { url: response.url, status: response.status, content_type: contentType, text: cut ? `${shown}\n[cut: ${bytes.byteLength} bytes of text, first ${MAX_TEXT} shown]` : shown };
    },
  };
}
