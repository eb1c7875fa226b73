// The OpenAPI document, built from the same zod schemas that validate each route, served as /openapi.json
// with Swagger UI at /docs (its assets ship in the npm package, so the page works offline).
import { readFileSync } from 'node:fs';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';

const { version } = z.object({ version: z.string() }).parse(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')));

/**
 * Registers the document builder on the root instance. It must come before the area plugins: @fastify/swagger
 * collects routes through onRoute, so a route registered before it is missing from the document.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Nomos', description: 'Event-sourced backend for a resident operations agent.', version },
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  // The document's own address; the UI reads the same document from /docs/json.
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
}
