// The operator's web console: the built front end (web/dist, made by the install command) served at `/` from this
// server, same origin as the API. Its files are public — the page must load before anyone signs in — and every
// API request it then makes carries the token like any other client's.
import { existsSync } from 'node:fs';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';
import { shipped } from '../paths.ts';

const DIST = shipped('web', 'dist');

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served to anyone: the console's own files, never data. */
    public?: boolean;
  }
}

export const consoleApp: FastifyPluginAsync<{ root?: string }> = async (app, options) => {
  const root = options.root ?? DIST;
  // Routes registered in this scope are the console's files: mark them public for the auth hook.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, public: true };
  });
  if (!existsSync(`${root}/index.html`)) {
    app.get('/', { schema: { hide: true } }, (_request, reply) =>
      reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .send(`The web console is not built (no ${root}/index.html). Build it with \`npm run build:web\` (npm ci does), then restart the server. The API answers meanwhile: see /docs.\n`),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root,
    // One route per file found at start (no wildcard): an API path never falls through to a file lookup.
    wildcard: false,
    // Hashed names under assets/ never change; index.html must be revalidated so a new build is picked up.
    setHeaders(res, path) {
      res.header('x-content-type-options', 'nosniff');
      // Everything the page needs comes from this server: nothing from elsewhere may load or be sent elsewhere.
      res.header('content-security-policy', "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
      if (path.includes('/assets/')) res.header('cache-control', 'public, max-age=31536000, immutable');
      else res.header('cache-control', 'no-cache');
    },
    cacheControl: false,
  });
};
