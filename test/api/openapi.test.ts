// The OpenAPI document comes from the routes' own zod schemas, the docs page serves it, and neither changes
// how unknown routes are answered. It validates as OpenAPI 3.1, every operation says what it answers, and
// real answers, good and refused, hold to what it says.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.ts';
import { parseTokens } from '../../src/api/auth.ts';
import { databases } from '../support/databases.ts';
import { instantExecutor } from '../support/instant-executor.ts';
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

interface Response {
  description: string;
  content?: Record<string, { schema: unknown }>;
}
interface Operation {
  summary?: string;
  tags?: string[];
  parameters?: Array<{ in: string; name: string }>;
  requestBody?: unknown;
  responses?: Record<string, Response>;
}
interface Document {
  openapi: string;
  tags?: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown> };
}

/** A host that runs every command at once: the document is under test here, not SSH. */
const fakeExecutor = instantExecutor();

const operations = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, path, method, op })));

/**
 * Checks real answers against the responses the document declares for their route, status and media type,
 * with the schemas compiled as JSON Schema 2020-12 (OpenAPI 3.1's dialect), formats included.
 */
function answerChecker(doc: Document) {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajvFormats.default(ajv);
  // The document's components, under an address every $ref to them is rewritten to.
  const rebased = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"urn:nomos:components#/$defs/')) as object;
  ajv.addSchema({ $id: 'urn:nomos:components', $defs: rebased(doc.components?.schemas ?? {}) });
  const compiled = new Map<string, ValidateFunction>();
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    params: (template.match(/\{/g) ?? []).length,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  const templateOf = (path: string) => templates.filter((t) => t.pattern.test(path.split('?')[0]!)).sort((a, b) => a.params - b.params)[0]?.template;
  const seen = new Set<string>();

  return {
    seen,
    compile(schema: unknown): ValidateFunction {
      return ajv.compile(rebased(schema));
    },
    check(method: string, path: string, answer: { status: number; type: string | null; text: string }): void {
      const template = templateOf(path);
      const where = `${method} ${path} → ${answer.status}`;
      expect(template, `${where}: no such path in the document`).toBeDefined();
      const response = doc.paths[template!]?.[method.toLowerCase()]?.responses?.[String(answer.status)];
      expect(response, `${where}: status not declared`).toBeDefined();
      const media = (answer.type ?? '').split(';')[0]!.trim();
      const schema = response!.content?.[media]?.schema;
      expect(schema, `${where}: ${media} not declared (declared: ${Object.keys(response!.content ?? {}).join(', ')})`).toBeDefined();
      const key = `${method} ${template} ${answer.status} ${media}`;
      let validate = compiled.get(key);
      if (!validate) {
        validate = this.compile(schema);
        compiled.set(key, validate);
      }
      const body: unknown = media.endsWith('json') ? JSON.parse(answer.text) : answer.text;
      expect(validate(body), `${where}: ${ajv.errorsText(validate.errors)}\n${answer.text.slice(0, 2_000)}`).toBe(true);
      seen.add(key);
    },
  };
}

describe.each(databases)('OpenAPI on $name', (database) => {
  let server: TestServer;
  let doc: Document;
  beforeAll(async () => {
    server = await startTestServer(database, { executor: fakeExecutor, readWaitMs: 2_000, bodyLimit: 65_536 });
    doc = (await server.request('GET', '/openapi.json')).body as Document;
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
    // The document, the docs page, the console and the MCP transport are not this API.
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/docs') || p === '/openapi.json' || p === '/' || p === '/mcp')).toEqual([]);

    const commands = doc.paths['/sessions/{id}/commands'].post;
    expect(commands.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'path', name: 'id', required: true })]));
    const body = commands.requestBody.content['application/json'].schema;
    expect(typeLiterals(body)).toEqual(expect.arrayContaining(['post_user_message', 'set_goal', 'propose_plan', 'update_plan_step', 'complete_task', 'run', 'classify_command', 'inspect_path']));

    const approvals = doc.paths['/approvals'].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    expect(approvals).toEqual(expect.arrayContaining(['query:status', 'query:limit', 'query:min_position']));
  });

  it('documents the freshness headers: a write’s X-Nomos-Read-Wait (and the Prefer that skips it), a read’s position, a page’s Link', async () => {
    const paths = doc.paths as Record<string, Record<string, any>>;
    const header = (operation: any, status: string, name: string) => operation.responses[status]?.headers?.[name]?.$ref;
    for (const [path, method, status] of [['/sessions/{id}/commands', 'post', '200'], ['/sessions/{id}', 'delete', '200'], ['/sessions', 'post', '201'], ['/approvals/{id}/approve', 'post', '200']] as const) {
      const operation = paths[path]![method];
      expect(header(operation, status, 'X-Nomos-Read-Wait'), `${method} ${path}`).toBe('#/components/headers/ReadWait');
      expect(operation.parameters, `${method} ${path}`).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'Prefer' })]));
    }
    expect(header(paths['/sessions']!.get, '200', 'X-Nomos-As-Of-Position')).toBe('#/components/headers/AsOfPosition');
    expect(header(paths['/sessions']!.get, '200', 'Link')).toBe('#/components/headers/Link');
    // What a server sends is what the document says it may.
    const allowed = (doc as any).components.headers.ReadWait.schema.enum as string[];
    const id = (await server.request('POST', '/sessions')).body.session_id;
    for (const prefer of [undefined, 'respond-async']) {
      const res = await server.request('POST', `/sessions/${id}/commands`, { type: 'post_user_message', text: 'headers' }, prefer ? { prefer } : {});
      expect(allowed).toContain(res.headers.get('x-nomos-read-wait'));
    }
  });

  it('validates as OpenAPI 3.1', async () => {
    const validator = new Validator();
    // A copy of its own: the validator may resolve references in place.
    const result = await validator.validate((await server.request('GET', '/openapi.json')).body);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('gives every operation a summary, a described tag and its responses: a success, and problem+json for each refusal', () => {
    const tags = new Set((doc.tags ?? []).filter((t) => (t.description ?? '') !== '').map((t) => t.name));
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThan(30);
    const checker = answerChecker(doc);
    for (const { name, op } of ops) {
      expect(op.summary ?? '', name).not.toBe('');
      expect(op.tags ?? [], name).not.toEqual([]);
      for (const tag of op.tags ?? []) expect(tags, `${name}: tag ${tag} has no description`).toContain(tag);
      const responses = op.responses ?? {};
      const statuses = Object.keys(responses);
      expect(statuses.filter((s) => /^2\d\d$/.test(s)), name).toHaveLength(1);
      // Every route is behind the auth hook and the one error handler.
      expect(statuses, name).toEqual(expect.arrayContaining(['400', '401', '500']));
      if (op.requestBody !== undefined) expect(statuses, `${name} takes a body`).toEqual(expect.arrayContaining(['413', '415']));
      if (op.parameters?.some((p) => p.name === 'min_position')) expect(statuses, `${name} takes min_position`).toContain('503');
      for (const [status, response] of Object.entries(responses)) {
        expect(response.description, `${name} ${status}`).not.toBe('');
        const media = Object.keys(response.content ?? {});
        if (Number(status) >= 400) {
          expect(media, `${name} ${status}`).toEqual(['application/problem+json']);
          expect(response.content!['application/problem+json']!.schema, `${name} ${status}`).toEqual({ $ref: '#/components/schemas/Problem' });
        } else {
          // One media type, or several the route chooses between (the command log: JSON or CSV).
          expect(media.length, `${name} ${status}`).toBeGreaterThan(0);
          // Every declared schema is JSON Schema 2020-12 that compiles in strict mode.
          for (const type of media) checker.compile(response.content![type]!.schema);
        }
      }
    }
    // Event streams and metrics say what they are, not JSON.
    const success = (path: string, method = 'get') => Object.keys(Object.values(doc.paths[path]?.[method]?.responses ?? {})[0]?.content ?? {});
    expect(success('/chat', 'post')).toEqual(['text/event-stream']);
    expect(success('/sessions/{id}/stream')).toEqual(['text/event-stream']);
    expect(success('/changes')).toEqual(['text/event-stream']);
    expect(success('/metrics')).toEqual(['text/plain']);
    expect(success('/executions')).toEqual(['application/json', 'text/csv']);
    // Shared schemas are listed once, by name, and each is used.
    const components = doc.components?.schemas ?? {};
    expect(Object.keys(components)).toEqual(expect.arrayContaining(['Problem', 'Session', 'Execution', 'Approval', 'Entity', 'Knowledge', 'JsonValue']));
    for (const id of Object.keys(components)) {
      const elsewhere = JSON.stringify({ paths: doc.paths, components: { ...components, [id]: null } });
      expect(elsewhere, `${id} is not used`).toContain(`"#/components/schemas/${id}"`);
    }
  });

  describe('real answers hold to the document', () => {
    let checker: ReturnType<typeof answerChecker>;
    let withTokens: FastifyInstance;
    const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,auditor:audit:audit-secret-1-long-enough-for-32-chars');
    beforeAll(async () => {
      checker = answerChecker(doc);
      // The same runtime behind a server that requires tokens: 401 and 403 come from it.
      withTokens = await buildApp({ runtime: server.runtime, tokens });
    });
    afterAll(async () => {
      await withTokens?.close();
    });

    /** Sends a request over HTTP, checks the answer against the document, and gives back the parsed body. */
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const init: RequestInit = { method, headers: { 'x-nomos-client': 'test', ...headers } };
      if (body !== undefined) {
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
        (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
      }
      const res = await fetch(server.url + path, init);
      const text = await res.text();
      checker.check(method, path, { status: res.status, type: res.headers.get('content-type'), text });
      return { status: res.status, body: text === '' || !/json/.test(res.headers.get('content-type') ?? '') ? text : JSON.parse(text) };
    };
    const command = async (id: string, cmd: Record<string, unknown>, status = 200) => {
      const res = await call('POST', `/sessions/${id}/commands`, cmd);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      return res.body;
    };

    it('for sessions, executions, the fleet, knowledge and operations, and for every kind of refusal', async () => {
      const ok = async (method: string, path: string, body?: unknown, status = 200) => {
        const res = await call(method, path, body);
        expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(status);
        return res.body;
      };

      // The fleet.
      const registered = await ok('POST', '/entities', {
        entities: [
          { slug: 'host:fake', type: 'host', ssh: { host: '127.0.0.1', port: 22, user: 'root' } },
          { slug: 'lxc:rclone', type: 'lxc', parent: 'host:fake', pve_id: 132 },
        ],
      });
      await ok('POST', '/entities/lxc:rclone/attributes', { attributes: { role: 'backup', disk: { size_gb: 8 } } });
      await ok('POST', '/entities/lxc:rclone/relations', { to: 'host:fake', type: 'backs_up' });

      // A session driven through every kind of command.
      const { session_id: id } = await ok('POST', '/sessions', undefined, 201);
      await command(id, { type: 'post_user_message', text: 'the rclone backup is broken' });
      await command(id, { type: 'set_goal', goal: 'Fix the rclone backup' });
      await command(id, { type: 'propose_plan', steps: [{ title: 'inspect the timer' }, { title: 'raise the memory limit' }] });
      await command(id, { type: 'update_plan_step', seq: 1, status: 'running' });
      await command(id, { type: 'record_tool_call_requested', tool_call_id: 't1', name: 'run', args: { target: 'lxc:rclone', command: 'uptime' } });
      const ran = await command(id, { type: 'run', target: 'lxc:rclone', command: 'systemctl status rclone-backup.timer' });
      expect(ran.status).toBe('succeeded');
      await command(id, { type: 'record_tool_call_completed', tool_call_id: 't1', result: { exit_code: 0, stdout: 'x'.repeat(5_000) } });
      await command(id, { type: 'inspect_path', path: '/mnt/media', targets: ['host:fake', 'lxc:rclone'] });
      await command(id, { type: 'classify_command', command: 'rm -rf /srv' });
      const queued = await command(id, { type: 'run', target: 'host:fake', command: 'chown :10000 /mnt/media_local' });
      expect(queued.status).toBe('approval_required');
      const denied = await command(id, { type: 'run', target: 'host:fake', command: 'rm -rf /srv/old' });
      await command(id, { type: 'record_assistant_message', text: 'The timer is fine; the container runs out of memory.' });

      // Executions and approvals.
      await ok('POST', '/classify', { command: 'pct exec 132 -- chown :10000 /mnt/media' });
      await ok('POST', `/approvals/${queued.approval_id}/approve`);
      const last = await ok('POST', `/approvals/${denied.approval_id}/deny`, { reason: 'not during backups' });
      await ok('POST', `/sessions/${id}/assent`, { minutes: 30 });
      const done = await command(id, { type: 'complete_task', outcome: 'partial', summary: 'diagnosed OOM; memory change queued for approval' });
      const fresh = `min_position=${Math.max(done.position, last.position, registered.position)}`;
      await ok('GET', `/executions/${ran.execution_id}?${fresh}`);
      await ok('GET', `/approvals?${fresh}`);
      await ok('GET', `/approvals?status=pending&session_id=${id}`);
      await ok('GET', `/sessions/${id}/executions?${fresh}`);
      // The command log: a page, its exports, and a bad filter.
      await ok('GET', `/executions?host=host:fake&limit=1&${fresh}`);
      await ok('GET', `/executions?format=csv&${fresh}`);
      await ok('GET', `/executions?format=json&status=denied&${fresh}`);
      await ok('GET', '/executions?status=exploded', undefined, 400);

      // Reading the session back.
      await ok('GET', `/sessions?${fresh}`);
      await ok('GET', '/sessions?outcome=partial&since=24h&limit=1&fields=outcome,blocker,tool_call_count');
      await ok('GET', `/sessions/${id}?${fresh}`);
      await ok('GET', `/sessions/${id}/tool_calls?${fresh}`);
      await ok('GET', `/sessions/${id}/plan?${fresh}`);
      await ok('GET', `/sessions/${id}/events`);

      // The fleet and knowledge read back.
      const written = await ok('POST', '/knowledge', { kind: 'runbook', title: 'rclone OOM', body: 'Raise the memory limit of lxc:rclone.', about: ['lxc:rclone'], tags: ['backup'] });
      const known = `min_position=${written.position}`;
      await ok('GET', `/entities?${fresh}`);
      await ok('GET', `/entities/host:fake?${fresh}`);
      await ok('GET', `/entities/lxc:rclone?${fresh}`);
      await ok('GET', `/entities/lxc:rclone/relations?${fresh}`);
      await ok('GET', `/knowledge?q=memory&${known}`);
      await ok('GET', `/knowledge/${written.knowledge_id}?${known}`);
      await ok('GET', `/entities/lxc:rclone/knowledge?${known}`);

      // Operations.
      await ok('GET', '/healthz');
      await ok('GET', '/me');
      await ok('GET', '/projections');
      await ok('GET', '/metrics');

      // Refusals: each as problem+json, as declared.
      const refused = async (method: string, path: string, status: number, body?: unknown, headers?: Record<string, string>) => {
        const res = await call(method, path, body, headers);
        expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(status);
      };
      await refused('GET', '/sessions/not-a-uuid', 400);
      await refused('GET', '/sessions?cursor=bogus', 400);
      await refused('GET', '/healthz', 400, undefined, { 'x-nomos-actor': 'root' });
      await refused('POST', `/sessions/${id}/commands`, 400, '{"type":"post_user_message","text":"\\ud800"}');
      await refused('POST', `/sessions/${id}/commands`, 400, '{"type": ');
      await refused('GET', `/sessions/${crypto.randomUUID()}`, 404);
      await refused('POST', `/approvals/${crypto.randomUUID()}/deny`, 404, { reason: 'no' });
      await refused('GET', '/entities/host:nowhere', 404);
      await refused('POST', `/sessions/${id}/commands`, 409, { type: 'update_plan_step', seq: 1, status: 'running' });
      await refused('POST', `/approvals/${queued.approval_id}/approve`, 409);
      await refused('POST', '/classify', 413, { command: 'x'.repeat(70_000) });
      await refused('POST', '/classify', 415, '<command>uptime</command>', { 'content-type': 'application/xml' });
      await refused('GET', `/sessions/${id}?min_position=1000000000`, 503);
      await refused('POST', '/chat', 503, { message: 'hello' });
      await refused('POST', `/sessions/${id}/continue`, 503);
    });

    it('for a server that requires tokens: 401 and 403', async () => {
      const inject = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>, status: number) => {
        const res = await withTokens.inject({ method, url, headers, ...(method === 'POST' && { payload: {} }) });
        expect(res.statusCode, res.body).toBe(status);
        checker.check(method, url, { status: res.statusCode, type: res.headers['content-type'] as string | null, text: res.body });
      };
      await inject('GET', '/me', {}, 401);
      await inject('GET', '/sessions', { authorization: 'Bearer not-a-token' }, 401);
      await inject('GET', '/me', { authorization: 'Bearer audit-secret-1-long-enough-for-32-chars' }, 200);
      await inject('POST', '/sessions', { authorization: 'Bearer audit-secret-1-long-enough-for-32-chars' }, 403);
      await inject('POST', '/sessions', { authorization: 'Bearer op-secret-1-long-enough-for-32-chars' }, 201);
    });

    it('for event streams: their content type', async () => {
      const { session_id: id } = (await call('POST', '/sessions')).body;
      for (const path of [`/sessions/${id}/stream`, '/changes']) {
        const aborted = new AbortController();
        const res = await fetch(server.url + path, { signal: aborted.signal });
        checker.check('GET', path, { status: res.status, type: res.headers.get('content-type'), text: '' });
        aborted.abort();
      }
    });

    it('covering every kind of answer', () => {
      const statuses = new Set([...checker.seen].map((key) => key.split(' ')[2]));
      expect([...statuses].sort()).toEqual(['200', '201', '400', '401', '403', '404', '409', '413', '415', '503']);
    });
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
