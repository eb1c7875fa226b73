// Who is calling, and may they: API tokens carry a role (operator, agent, auditor) from configuration.
// With no tokens configured, auth is off (the server then listens on loopback only) and a client may name
// itself with `X-Nomos-Actor: role[:id]`; a bearer token is then refused, not ignored, so that nobody believes it checked.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../domain/messages.ts';
import type { AuthThrottle } from './auth-throttle.ts';
import { HttpProblem } from './errors.ts';
import { ApiRole, type ApiToken } from './tokens.ts';

export { ApiRole, type ApiToken, parseTokens } from './tokens.ts';

export interface Principal {
  readonly role: ApiRole;
  readonly name: string;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** `throttle` slows down an address that keeps presenting wrong tokens. */
export function authenticate(request: FastifyRequest, tokens: readonly ApiToken[], throttle: AuthThrottle | null = null): Principal {
  const header = request.headers.authorization;
  if (tokens.length === 0) {
    if (header !== undefined) throw new HttpProblem(400, 'auth_off', 'auth is off on this server (NOMOS_TOKENS is unset), so the Authorization header sent would not be checked: remove it, or start the server with NOMOS_TOKENS');
    return fromActorHeader(request);
  }
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  if (!match) throw new HttpProblem(401, 'unauthenticated', 'send an API token: Authorization: Bearer <token>');
  throttle?.check(request.ip);
  const given = digest(match[1]!);
  const found = tokens.find((t) => timingSafeEqual(digest(t.token), given));
  if (!found) {
    throttle?.fail(request.ip);
    throw new HttpProblem(401, 'unauthenticated', 'the API token is not one this server knows');
  }
  return { role: found.role, name: found.name };
}

function fromActorHeader(request: FastifyRequest): Principal {
  const header = request.headers['x-nomos-actor'];
  if (header === undefined) return { role: 'operator', name: 'anonymous' };
  const value = Array.isArray(header) ? (header[0] ?? '') : header;
  const [role, ...rest] = value.split(':');
  const parsed = ApiRole.safeParse(role);
  if (!parsed.success) throw new HttpProblem(400, 'bad_actor', `X-Nomos-Actor must be operator, agent or auditor, optionally with :id — got "${value.slice(0, 60)}"`);
  const name = rest.join(':').trim();
  return { role: parsed.data, name: name === '' ? parsed.data : name.slice(0, 200) };
}

/** Refuses (403) a principal whose role may not do this; returns the actor the events will name. */
export function authorize(principal: Principal, allowed: readonly ApiRole[], action: string): Actor {
  if (!allowed.includes(principal.role)) {
    throw new HttpProblem(403, 'forbidden', `role ${principal.role} may not ${action} (allowed: ${allowed.join(', ')})`);
  }
  if (principal.role === 'auditor') throw new HttpProblem(403, 'forbidden', `role auditor is read-only and may not ${action}`);
  return { role: principal.role, id: principal.name };
}
