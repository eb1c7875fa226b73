// http_get for the agent: one page of the public internet, read as text. Each hop (the URL, then every redirect,
// followed by hand) is resolved first, refused when any of its addresses is not public (address.ts) unless the
// operator opened it (NOMOS_HTTP_GET_ALLOW), and connected only to the addresses checked (pinned-request.ts).
// One time bound covers every hop's resolution, connection, headers and body; the body read is bounded, and so is
// the text made of it (html-text.ts); at most 8 KiB of text goes back, every cut marked.
import { TextDecoder } from 'node:util';
import type { WebReader } from '../../ports/web.ts';
import { type AllowList, NOTHING_ALLOWED, allowsAddress, allowsName, ipLiteral, whyNotPublic } from './address.ts';
import { htmlToText, plainText } from './html-text.ts';
import { type Response, pinnedGet } from './pinned-request.ts';
import { type Resolve, serversResolver, systemResolver } from './resolve.ts';

const MAX_TEXT = 8 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const WHY = 'http_get only reaches the public internet (NOMOS_HTTP_GET_ALLOW opens hosts on purpose)';

export interface HttpReaderOptions {
  /** What the operator opened on purpose. */
  readonly allow?: AllowList;
  /** DNS servers (`ip` or `ip:port`) asked instead of the system resolver. */
  readonly dnsServers?: readonly string[];
  /** Certificates trusted besides the system's (a test's own authority). */
  readonly ca?: string | Buffer;
  /** The whole fetch, every hop: resolution, connection, headers, body. */
  readonly timeoutMs?: number;
  readonly maxBodyBytes?: number;
  readonly maxRedirects?: number;
  /** The time and the text the conversion of a body to text may take. */
  readonly convertMs?: number;
  readonly maxTextChars?: number;
}

/** A fetch http_get will not make, with what was refused and why: the tool's answer to the agent. */
export class HttpGetRefused extends Error {
  override readonly name = 'HttpGetRefused';
}

export function httpReader(options: HttpReaderOptions = {}): WebReader {
  const allow = options.allow ?? NOTHING_ALLOWED;
  const resolve = options.dnsServers?.length ? serversResolver(options.dnsServers) : systemResolver();
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxBody = options.maxBodyBytes ?? 2 * 1024 * 1024;
  const maxRedirects = options.maxRedirects ?? 5;
  const limits = { maxMs: options.convertMs ?? 2_000, maxChars: options.maxTextChars ?? 64 * 1024 };
  return {
    async get(url: string) {
      const signal = AbortSignal.timeout(timeoutMs);
      let current = parse(url, null);
      for (let hop = 0; ; hop++) {
        const where = hop === 0 ? '' : `redirect ${hop} to ${current.href}: `;
        const addresses = await checked(current, allow, resolve, signal, where);
        const response = await guarded(pinnedGet(current, addresses, { signal, ca: options.ca }), signal, timeoutMs, current);
        const location = REDIRECTS.has(response.status) ? response.headers.location : undefined;
        if (location === undefined) return await readable(response, current, signal, timeoutMs, maxBody, limits);
        response.discard();
        if (hop === maxRedirects) throw new HttpGetRefused(`refused: more than ${maxRedirects} redirects (the last to ${location})`);
        current = parse(location, current);
      }
    },
  };
}

/** An absolute http(s) URL without credentials; a redirect's Location is read relative to the page that sent it. */
function parse(text: string, base: URL | null): URL {
  let url: URL;
  try {
    url = new URL(text, base ?? undefined);
  } catch {
    throw new HttpGetRefused(`refused: ${base ? `redirect to "${text}"` : `"${text}"`} is not a URL`);
  }
  const which = base ? `redirect to ${url.href}` : url.href;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new HttpGetRefused(`refused: ${which}: only http and https URLs can be fetched, not ${url.protocol}`);
  // A user name or password would be sent to the server, and with a redirect to another one.
  if (url.username !== '' || url.password !== '') throw new HttpGetRefused(`refused: ${which}: a URL carrying credentials is not fetched`);
  return url;
}

/**
 * Every address of the hop's host, each judged: one address that is not public refuses the hop, because a client
 * may connect to any of them (both families, fallback on failure) and a resolver an attacker answers can list a
 * public decoy first. The connection is then pinned to exactly this list.
 */
async function checked(url: URL, allow: AllowList, resolve: Resolve, signal: AbortSignal, where: string): Promise<string[]> {
  const literal = ipLiteral(url.hostname);
  let addresses: string[];
  if (literal !== null) addresses = [literal];
  else {
    try {
      addresses = await resolve(url.hostname, signal);
    } catch (error) {
      if (signal.aborted) throw new Error(`${where}gave up resolving ${url.hostname}: the time bound passed`);
      throw new Error(`${where}could not resolve ${url.hostname}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    if (addresses.length === 0) throw new Error(`${where}${url.hostname} has no address`);
    if (allowsName(allow, url.hostname)) return addresses;
  }
  for (const address of addresses) {
    const why = allowsAddress(allow, address) ? null : whyNotPublic(address);
    if (why === null) continue;
    const named = literal === null ? `${url.hostname} resolves to ${addresses.join(', ')}; ` : '';
    throw new HttpGetRefused(`refused: ${where}${named}${why}; ${WHY}`);
  }
  return addresses;
}

async function guarded<T>(work: Promise<T>, signal: AbortSignal, timeoutMs: number, url: URL): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (signal.aborted) throw new Error(`gave up on ${url.href} after ${timeoutMs} ms (the bound on every hop's connection, headers and body)`);
    throw new Error(`${url.href}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

async function readable(response: Response, url: URL, signal: AbortSignal, timeoutMs: number, maxBody: number, limits: { maxMs: number; maxChars: number }) {
  const contentType = String(response.headers['content-type'] ?? '');
  const notes: string[] = [];
  if (!isText(contentType)) {
    response.discard();
    return { url: url.href, status: response.status, content_type: contentType, text: `[not shown: ${contentType} is not text]` };
  }
  const { bytes, cut } = await guarded(response.body(maxBody), signal, timeoutMs, url);
  if (cut) notes.push(`[cut: the page is larger than ${maxBody} bytes; only the first ${maxBody} were read]`);
  const body = decoderFor(contentType).decode(bytes);
  const converted = /html|xml/i.test(contentType) ? await htmlToText(body, limits) : plainText(body, limits);
  if (converted.stopped === 'time') notes.push(`[cut: the conversion to text stopped after ${limits.maxMs} ms]`);
  const encoded = Buffer.from(converted.text);
  const more = converted.stopped === 'size' ? 'more than ' : '';
  if (encoded.byteLength > MAX_TEXT) notes.unshift(`[cut: ${more}${encoded.byteLength} bytes of text, first ${MAX_TEXT} shown]`);
  const shown = encoded.byteLength > MAX_TEXT ? new TextDecoder().decode(encoded.subarray(0, MAX_TEXT)).replace(/\uFFFD$/, '') : converted.text;
  return { url: url.href, status: response.status, content_type: contentType, text: [shown, ...notes].join('\n') };
}

/** Text-like types, and a missing type (a server that names none usually sends text). */
function isText(contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === '' || type.startsWith('text/') || /^application\/([\w.+-]+\+)?(json|xml|javascript|x-yaml|yaml)$/.test(type) || type === 'application/xhtml+xml';
}

function decoderFor(contentType: string): TextDecoder {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8');
  } catch {
    return new TextDecoder('utf-8');
  }
}
