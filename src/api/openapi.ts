// The OpenAPI document, built from the same zod schemas that validate each route, served as /openapi.json
// with Swagger UI at /docs (its assets ship in the npm package, so the page works offline).
import { readFileSync } from 'node:fs';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySerializerCompiler } from 'fastify';
import { createJsonSchemaTransform, createJsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { apiSchemas } from './responses.ts';
import { shipped } from '../paths.ts';

const { version } = z.object({ version: z.string() }).parse(JSON.parse(readFileSync(shipped('package.json'), 'utf8')));

const TAGS = [
  { name: 'sessions', description: 'Start sessions, drive them with commands, and read them back: the list with its filters, one session, its tool calls, plan and raw events.' },
  { name: 'executions', description: 'Running commands on the fleet: the classifier, executions and their output, the approvals queue and assent windows.' },
  { name: 'fleet', description: 'The inventory of hosts, containers and VMs, their attributes and their relationships.' },
  { name: 'knowledge', description: 'Runbooks, investigations and notes: written back, searched, listed per entity.' },
  { name: 'agent', description: "The built-in agent's model and context budget, and what its model calls cost: per call, per session and in totals." },
  { name: 'policy', description: "The operator's policy: rules that allow, ask or deny commands, versioned as events, and what it decides for a command." },
  { name: 'chat', description: 'Talking to the built-in agent: a message and its turn as Server-Sent Events, following a session, cancel and continue.' },
  { name: 'log', description: 'The verifiable log: signed checkpoints of a Merkle tree over every event, its public key, and inclusion and consistency proofs (RFC 9162).' },
  { name: 'operations', description: 'Health, who the caller is, the read models’ progress, the change feed and metrics.' },
];

/**
 * Response schemas document the answers and type the handlers; a reply is not parsed against them again, so
 * it goes out as JSON.stringify writes it (as before routes had them), and no schema can turn a reply into a
 * 500. test/api/openapi.test.ts holds real answers to the document instead.
 */
export const serializeAsJson: FastifySerializerCompiler<unknown> = () => (data) => JSON.stringify(data);

const transformObject = createJsonSchemaTransformObject({ schemaRegistry: apiSchemas });

/**
 * Registers the document builder on the root instance. It must come before the area plugins: @fastify/swagger
 * collects routes through onRoute, so a route registered before it is missing from the document.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Nomos', description: 'Event-sourced backend for a resident operations agent.', version },
      tags: TAGS,
    },
    transform: createJsonSchemaTransform({ schemaRegistry: apiSchemas }),
    // The provider lists each registered schema twice, as an answer and as input (XInput): keep those used.
    transformObject: (document) => {
      const built = transformObject(document);
      const schemas: Record<string, unknown> = ('components' in built && built.components?.schemas) || {};
      const paths = JSON.stringify(built.paths);
      for (const id of Object.keys(schemas)) if (id.endsWith('Input') && !paths.includes(`"#/components/schemas/${id}"`)) delete schemas[id];
      withFreshnessHeaders(built as unknown as OpenApiDocument);
      return built;
    },
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  // The document's own address; the UI reads the same document from /docs/json.
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
}

interface OpenApiOperation {
  parameters?: Array<Record<string, unknown>>;
  responses?: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
}

interface OpenApiDocument {
  paths?: Record<string, Record<string, OpenApiOperation>>;
  components?: { headers?: Record<string, unknown>; [key: string]: unknown };
}

const WRITE_METHODS = new Set(['post', 'put', 'patch', 'delete']);

/**
 * The headers that say how fresh an answer is, which no zod schema carries: a write's read-your-writes outcome
 * (and the Prefer header that skips it), a read's position and a list page's Link. Added in place.
 */
function withFreshnessHeaders(document: OpenApiDocument): void {
  document.components = {
    ...document.components,
    headers: {
      ...document.components?.headers,
      ReadWait: {
        description:
          'Whether the read models showed this write before the answer was sent (read-your-writes): `reached`; `timed-out` when NOMOS_READ_WAIT_MS passed first (the write is stored, its effect shows shortly); `skipped` when the request sent `Prefer: respond-async`. Absent when the answer reports no write.',
        schema: { type: 'string', enum: ['reached', 'timed-out', 'skipped'] },
      },
      PreferenceApplied: { description: '`respond-async` when the request asked for it (RFC 7240).', schema: { type: 'string' } },
      AsOfPosition: { description: 'The position of the last event the read models this answer comes from have applied.', schema: { type: 'integer', minimum: 0 } },
      Link: { description: 'The next page (`rel="next"`), absent on the last page.', schema: { type: 'string' } },
    },
  };
  const prefer = {
    in: 'header',
    name: 'Prefer',
    required: false,
    description: '`respond-async`: answered as soon as the events are stored, without waiting for the read models to show them.',
    schema: { type: 'string' },
  };
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      const json = Object.entries(operation.responses ?? {}).filter(([status, response]) => status.startsWith('2') && response.content?.['application/json'] !== undefined);
      if (WRITE_METHODS.has(method)) {
        if (json.length === 0) continue;
        operation.parameters = [...(operation.parameters ?? []), prefer];
        for (const [, response] of json) {
          response.headers = { ...response.headers, 'X-Nomos-Read-Wait': { $ref: '#/components/headers/ReadWait' }, 'Preference-Applied': { $ref: '#/components/headers/PreferenceApplied' } };
        }
      } else if (method === 'get' && (operation.parameters ?? []).some((p) => p.in === 'query' && p.name === 'min_position')) {
        for (const [, response] of json) {
          response.headers = {
            ...response.headers,
            'X-Nomos-As-Of-Position': { $ref: '#/components/headers/AsOfPosition' },
            ...(path === '/sessions' && { Link: { $ref: '#/components/headers/Link' } }),
          };
        }
      }
    }
  }
}
