// No other origin drives the server (docs/security.md): before authentication, a request must name this server in
// its Host (with auth off, or when NOMOS_ALLOWED_HOSTS is set), a state-changing request or any /mcp request must
// not come from another origin, and a POST must be one a browser would only send after a CORS preflight (which
// this server never answers positively): a JSON body or the X-Nomos-Client header.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpProblem } from './errors.ts';
import { type OriginPolicy, hostAllowed, normalOrigin, ownOrigins } from './hosts.ts';

/** The header a client without a JSON body sends on a POST: any custom header forces a browser's preflight. */
export const CLIENT_HEADER = 'x-nomos-client';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

function checkOrigin(request: FastifyRequest, policy: OriginPolicy): void {
  const origin = single(request.headers.origin);
  const host = request.headers.host ?? '';
  const listed = origin !== undefined && policy.allowedOrigins.includes(normalOrigin(origin) ?? '');
  if (origin !== undefined && !listed) {
    const normal = normalOrigin(origin);
    if (normal === null || !ownOrigins(host).includes(normal)) {
      throw new HttpProblem(403, 'foreign_origin', `Origin ${origin.slice(0, 200)} is not this server's own (${host.slice(0, 200)}); a page of another origin may not change anything here (NOMOS_ALLOWED_ORIGINS names others)`);
    }
  }
  if (!listed && single(request.headers['sec-fetch-site']) === 'cross-site') {
    throw new HttpProblem(403, 'cross_site_request', 'the browser says this request comes from another site (Sec-Fetch-Site: cross-site); a page of another site may not change anything here');
  }
}

/** A POST a browser sends cross-origin without asking first has no JSON content type and no custom header. */
function checkPreflighted(request: FastifyRequest): void {
  if (single(request.headers[CLIENT_HEADER])) return;
  const type = single(request.headers['content-type']);
  if (type === undefined) {
    throw new HttpProblem(400, 'client_header_required', 'a POST without a JSON body must carry the X-Nomos-Client header (any value, such as X-Nomos-Client: curl)');
  }
  const media = type.split(';')[0]!.trim().toLowerCase();
  if (media !== 'application/json') {
    throw new HttpProblem(415, 'unsupported_media_type', `a POST takes a body of Content-Type application/json, not ${media.slice(0, 100)}; without a body, send the X-Nomos-Client header instead`);
  }
}

/** Adds the checks as the first onRequest hook: call before anything that authenticates. */
export function guardOrigin(app: FastifyInstance, policy: OriginPolicy): void {
  app.addHook('onRequest', (request, _reply, next) => {
    try {
      if (policy.checkHost) {
        const host = request.headers.host;
        if (host === undefined || !hostAllowed(host, policy)) {
          throw new HttpProblem(403, 'foreign_host', `Host ${host === undefined ? '(none)' : host.slice(0, 200)} does not name this server; with auth off only loopback and the listen address do (NOMOS_ALLOWED_HOSTS names others)`);
        }
      }
      const mcp = request.url === '/mcp' || request.url.startsWith('/mcp?');
      if (mcp || STATE_CHANGING.has(request.method)) checkOrigin(request, policy);
      if (request.method === 'POST') checkPreflighted(request);
      next();
    } catch (error) {
      next(error as Error);
    }
  });
}
