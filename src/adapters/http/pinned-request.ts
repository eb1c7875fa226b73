// One GET connected only to addresses already checked: the socket's lookup answers from that list, so DNS is
// never asked a second time between the check and the connection (rebinding), while the Host header and TLS
// (server name, certificate) stay those of the URL's name. No connection pool: a pooled socket is keyed by
// name, not by the address that was checked.
import { type IncomingHttpHeaders, type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { type LookupFunction, isIP } from 'node:net';
import { type Readable, pipeline } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

const HEADERS = {
  accept: 'text/html, text/plain, application/json;q=0.9, */*;q=0.5',
  'accept-encoding': 'gzip, deflate, br',
  'user-agent': 'nomos-http-get',
};

export interface Response {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Reads at most maxBytes of the (decoded) body; cut says there was more. Closes the connection either way. */
  body(maxBytes: number): Promise<{ bytes: Buffer; cut: boolean }>;
  /** Closes the connection without reading the body (a redirect). */
  discard(): void;
}

export function pinnedGet(url: URL, addresses: readonly string[], options: { signal: AbortSignal; ca?: string | Buffer | undefined }): Promise<Response> {
  const pinned = addresses.map((address) => ({ address, family: isIP(address) }));
  const lookup: LookupFunction = (_name, wanted, callback) => {
    const family = wanted.family === 4 || wanted.family === 'IPv4' ? 4 : wanted.family === 6 || wanted.family === 'IPv6' ? 6 : 0;
    const usable = family === 0 ? pinned : pinned.filter((a) => a.family === family);
    const first = usable[0];
    if (!first) callback(Object.assign(new Error(`no checked IPv${family} address for ${url.hostname}`), { code: 'ENOTFOUND' }), '');
    else if (wanted.all) callback(null, usable);
    else callback(null, first.address, first.family);
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<Response>((resolve, reject) => {
    const request = send(url, { method: 'GET', agent: false, lookup, signal: options.signal, headers: HEADERS, ...(options.ca !== undefined && { ca: options.ca }) }, (message) => {
      resolve({ status: message.statusCode ?? 0, headers: message.headers, body: (max) => readBody(message, max), discard: () => message.destroy() });
    });
    request.on('error', reject);
    request.end();
  });
}

async function readBody(message: IncomingMessage, maxBytes: number): Promise<{ bytes: Buffer; cut: boolean }> {
  const stream = decoded(message);
  const chunks: Buffer[] = [];
  let read = 0;
  let cut = false;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const room = maxBytes - read;
      if (chunk.byteLength > room) {
        chunks.push(chunk.subarray(0, room));
        read += room;
        cut = true;
        break;
      }
      chunks.push(chunk);
      read += chunk.byteLength;
    }
  } finally {
    message.destroy();
  }
  return { bytes: Buffer.concat(chunks, read), cut };
}

/** The body as the server meant it: decompressed output is what counts against the bound, so a bomb stops there. */
function decoded(message: IncomingMessage): Readable {
  const encoding = (message.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const decoder = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : null;
  if (encoding === 'identity' || encoding === '') return message;
  if (!decoder) {
    message.destroy();
    throw new Error(`the page is sent with content-encoding ${encoding}, which http_get cannot read`);
  }
  return pipeline(message, decoder, () => {});
}
