// Shared infrastructure decorated on the Fastify instance (through fastify-plugin, so every area plugin sees it).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Actor } from '../domain/messages.ts';
import { Role } from '../domain/messages.ts';
import type { CommandContext } from '../commands/session.ts';
import type { Runtime } from '../runtime.ts';
import { HttpProblem } from './errors.ts';

export interface ApiOptions {
  readonly runtime: Runtime;
  readonly readWaitMs: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    nomos: ApiOptions;
  }
}

export const nomosContext = fp<ApiOptions>(
  (app, options, done) => {
    app.decorate('nomos', options);
    done();
  },
  { name: 'nomos-context' },
);

/**
 * Who is acting. Until API tokens exist, a client may name itself with `X-Nomos-Actor: role[:id]`
 * (operator, agent or system); anything else is refused rather than guessed.
 */
export function actorOf(request: FastifyRequest): Actor {
  const header = request.headers['x-nomos-actor'];
  if (header === undefined) return { role: 'operator', id: 'anonymous' };
  const value = Array.isArray(header) ? header[0] ?? '' : header;
  const [role, ...rest] = value.split(':');
  const parsed = Role.safeParse(role);
  if (!parsed.success) throw new HttpProblem(400, 'bad_actor', `X-Nomos-Actor must be operator, agent or system, optionally with :id — got "${value}"`);
  const id = rest.join(':').trim();
  return { role: parsed.data, id: id === '' ? parsed.data : id.slice(0, 200) };
}

export function commandContext(request: FastifyRequest): CommandContext {
  const correlation = request.headers['x-correlation-id'];
  const correlationId = typeof correlation === 'string' && correlation.length > 0 && correlation.length <= 200 ? correlation : request.id;
  return { actor: actorOf(request), correlationId, causationId: request.id };
}

export type App = FastifyInstance;
