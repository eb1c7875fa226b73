// The OpenAPI document comes from the routes' own zod schemas, the docs page serves it, and neither changes
// how unknown routes are answered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

/** Every `type` literal a schema's variants accept, wherever they sit in oneOf/anyOf. */
function typeLiterals(schema: unknown): string[] {
  if (Array.isArray(schema)) return schema.flatMap(typeLiterals);
  if (typeof schema !== 'object' || schema === null) return [];
  const s = schema as Record<string, unknown>;
  const type = (s.properties as Record<string, { const?: string; enum?: string[] }> | undefined)?.type;
  const own = type?.const !== undefined ? [type.const] : (type?.enum ?? []);
  return [...own, ...typeLiterals(s.oneOf), ...typeLiterals(s.anyOf)];
}

describe.each(databases)('OpenAPI on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('describes every area from the schemas that validate it', async () => {
    const res = await server.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = res.body;
    expect(doc.openapi).toMatch(/^3\./);
    const methods = (path: string) => Object.keys(doc.paths[path] ?? {}).sort();
    expect(methods('/sessions')).toEqual(['get', 'post']);
    expect(methods('/sessions/{id}')).toContain('get');
    expect(methods('/sessions/{id}/commands')).toEqual(['post']);
    expect(methods('/entities')).toContain('get');
    expect(methods('/approvals')).toEqual(['get']);
    expect(methods('/approvals/{id}/approve')).toEqual(['post']);
    expect(methods('/executions/{id}')).toEqual(['get']);
    expect(methods('/chat')).toContain('post');
    expect(methods('/classify')).toEqual(['post']);
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/knowledge'))).toBe(true);
    expect(methods('/projections')).toEqual(['get']);
    expect(methods('/healthz')).toEqual(['get']);
    expect(methods('/metrics')).toEqual(['get']);
    // The document and the docs page themselves are not API.
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/docs') || p === '/openapi.json')).toEqual([]);

    const commands = doc.paths['/sessions/{id}/commands'].post;
    expect(commands.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'path', name: 'id', required: true })]));
    const body = commands.requestBody.content['application/json'].schema;
    expect(typeLiterals(body)).toEqual(expect.arrayContaining(['post_user_message', 'set_goal', 'propose_plan', 'update_plan_step', 'complete_task', 'run', 'classify_command', 'inspect_path']));

    const approvals = doc.paths['/approvals'].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    expect(approvals).toEqual(expect.arrayContaining(['query:status', 'query:limit', 'query:min_position']));
  });

  it('serves a docs page that works offline', async () => {
    const page = await server.request('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.body).toContain('swagger-ui');
    // Its script comes from this server, not a CDN.
    const asset = await fetch(`${server.url}/docs/static/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
    expect((await asset.text()).length).toBeGreaterThan(1000);
    const json = await server.request('GET', '/docs/json');
    expect(json.body.openapi).toMatch(/^3\./);
  });

  it('still answers unknown routes with problem+json 404', async () => {
    for (const path of ['/no-such-thing', '/docs/static/no-such-file.js', '/openapi.yaml.nope']) {
      const res = await server.request('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/problem\+json/);
      expect(res.body.code, path).toBe('no_such_route');
    }
  });
});
