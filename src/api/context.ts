// Shared infrastructure decorated on the Fastify instance (through fastify-plugin, so every area plugin sees it).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { CommandContext } from '../commands/context.ts';
import type { Runtime } from '../runtime.ts';
import type { AuthThrottle } from './auth-throttle.ts';
import { type ApiRole, type ApiToken, type Principal, authenticate, authorize } from './auth.ts';

export interface ApiOptions {
  readonly runtime: Runtime;
  readonly readWaitMs: number;
  /** Empty: auth is off. */
  readonly tokens: readonly ApiToken[];
  /** Origins besides the server's own whose pages may change state (NOMOS_ALLOWED_ORIGINS). */
  readonly allowedOrigins: readonly string[];
  readonly throttle: AuthThrottle;
}

declare module 'fastify' {
  interface FastifyInstance {
    nomos: ApiOptions;
  }
  interface FastifyRequest {
    principal: Principal;
  }
}

export const nomosContext = fp<ApiOptions>(
  (app, options, done) => {
    app.decorate('nomos', options);
    app.decorateRequest('principal', null as unknown as Principal);
    // Every request is authenticated before routing, so no route can forget it.
    app.addHook('onRequest', (request, _reply, next) => {
      // The console's own files (HTML, scripts, styles) are served to anyone: the page signs in after it loads.
      if (request.routeOptions.config.public === true) {
        request.principal = { role: 'auditor', name: 'anonymous' };
        next();
        return;
      }
      try {
        request.principal = authenticate(request, options.tokens, options.throttle);
        next();
      } catch (error) {
        next(error as Error);
      }
    });
    done();
  },
  { name: 'nomos-context' },
);

/**
 * The metadata of a command sent by this request, once its caller is allowed to: `allowed` are the roles
 * that may, `action` says what in a refusal.
 */
export function commandContext(request: FastifyRequest, allowed: readonly ApiRole[], action: string): CommandContext {
  const actor = authorize(request.principal, allowed, action);
  const correlation = request.headers['x-correlation-id'];
  const correlationId = typeof correlation === 'string' && correlation.length > 0 && correlation.length <= 200 ? correlation : request.id;
  return { actor, correlationId, causationId: request.id };
}

export type App = FastifyInstance;
