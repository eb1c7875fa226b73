// The operator's policy over HTTP: read it and its history, replace it (operators only; JSON or YAML; If-Match with
// the version it was read at, 409 when another change came first), and check what it decides for a command on a
// target beside the classifier's verdict; run a candidate in shadow, read where it disagreed, promote or drop it.
// A document that does not load answers 400 naming each rule and example, and changes nothing.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { InvalidPolicy, applyPolicy, currentPolicy, dropShadow, policyHistory, promoteShadow, readPolicy, startShadow } from '../commands/policy.ts';
import { CommandText } from '../domain/command-text.ts';
import { DECISIONS } from '../domain/policy/index.ts';
import { shadowDivergences } from '../projections/executions.ts';
import { RiskClass } from '../domain/session/events.ts';
import { commandContext } from './context.ts';
import { HttpProblem } from './errors.ts';
import { YAML_TYPES, policyFromYaml } from './policy-body.ts';
import { BODY, CALLER, WRITE } from './responses.ts';
import { TargetSlug, Time } from './views.ts';

const TAGS = ['policy'];
const Rules = z.array(z.unknown()).describe('the rules: {id, match, targets?, decision: allow|ask|deny, justification, examples?: {match, not_match}}');
const Who = z.unknown().describe('the actor who applied it ({role, id})');

const GET_SCHEMA = {
  summary: 'The policy in force',
  tags: TAGS,
  description: 'Version 0 with no rules: no policy was ever applied, and the classifier alone decides.',
  response: { 200: z.object({ version: z.number().int(), digest: z.string().nullable(), rules: Rules, updated_at: Time.nullable(), updated_by: Who }), ...CALLER },
};
const HISTORY_SCHEMA = {
  summary: "The policy's versions, oldest first",
  tags: TAGS,
  response: { 200: z.object({ versions: z.array(z.object({ version: z.number().int(), digest: z.string(), rules: Rules, at: Time, by: Who })) }), ...CALLER },
};
const PUT_SCHEMA = {
  summary: 'Replace the policy',
  tags: TAGS,
  description:
    'Operators only. The document as JSON, or the same as YAML (content-type application/yaml). `If-Match: <version>` applies it only on that version (409 policy_version_mismatch otherwise). Every example is checked when it loads: a document with problems answers 400 listing each (rule, example, message) and changes nothing.',
  headers: z.object({ 'if-match': z.string().max(40).optional() }).passthrough(),
  body: z.unknown(),
  response: { 200: z.object({ version: z.number().int(), digest: z.string(), unchanged: z.boolean(), position: z.number().int() }), ...WRITE, ...BODY },
};
const CHECK_SCHEMA = {
  summary: 'What the policy decides for a command on a target',
  tags: TAGS,
  body: z.strictObject({ command: CommandText.min(1), target: TargetSlug }),
  response: {
    200: z.object({ decision: z.enum(['allow', 'ask', 'deny']), risk_class: RiskClass, rule_id: z.string(), policy_version: z.number().int(), reasons: z.array(z.string()) }),
    ...CALLER,
    ...BODY,
  },
};

const ShadowDivergence = z.object({
  execution_id: z.string(),
  session_id: z.string(),
  target: z.string(),
  command: z.string(),
  at: Time,
  decision: z.enum(DECISIONS).describe('what the policy in force decided (and was obeyed)'),
  rule_id: z.string(),
  shadow_decision: z.enum(DECISIONS).describe('what the candidate would have decided'),
  shadow_rule_id: z.string(),
});
const SHADOW_SCHEMA = {
  summary: 'The candidate policy in shadow, and where it disagreed with the policy in force',
  tags: TAGS,
  description: 'Every command requested since the candidate was put in shadow is decided under both; `decided` counts them, `diverged` those decided differently; `divergences` lists the latest of those.',
  querystring: z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).optional() }),
  response: {
    200: z.object({
      shadow: z.object({ shadow: z.number().int(), digest: z.string(), rules: Rules, started_at: Time, started_by: Who }).nullable(),
      decided: z.number().int(),
      diverged: z.number().int(),
      divergences: z.array(ShadowDivergence),
    }),
    ...CALLER,
  },
};
const SHADOW_PUT_SCHEMA = {
  summary: 'Run a candidate policy in shadow',
  tags: TAGS,
  description: 'Operators only. The same document forms as PUT /policy. From now on every command is also decided under it, recorded and never obeyed; a candidate already in shadow is dropped.',
  body: z.unknown(),
  response: { 200: z.object({ shadow: z.number().int(), digest: z.string(), unchanged: z.boolean(), position: z.number().int() }), ...WRITE, ...BODY },
};
const PROMOTE_SCHEMA = {
  summary: 'Switch on the policy in shadow',
  tags: TAGS,
  description: 'Operators only. It becomes the next version of the policy in force; `If-Match: <version>` as for PUT /policy. 409 no_shadow_policy when none is in shadow.',
  headers: z.object({ 'if-match': z.string().max(40).optional() }).passthrough(),
  response: { 200: z.object({ shadow: z.number().int(), version: z.number().int(), digest: z.string(), position: z.number().int() }), ...WRITE },
};
const DROP_SCHEMA = {
  summary: 'Drop the policy in shadow',
  tags: TAGS,
  description: 'Operators only. 409 no_shadow_policy when none is in shadow.',
  response: { 200: z.object({ shadow: z.number().int(), position: z.number().int() }), ...WRITE },
};

/** If-Match as a client writes it: 3, "3" or W/"3". */
function expectedVersion(header: string | undefined): number | null {
  if (header === undefined) return null;
  const version = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(header)?.[1];
  if (version === undefined) throw new HttpProblem(400, 'invalid_if_match', `If-Match takes the policy's version (GET /policy), such as If-Match: "3"; got ${JSON.stringify(header.slice(0, 40))}`);
  return Number(version);
}

/** The document a request carries: its JSON body, or its YAML text parsed. */
function documentOf(request: { body: unknown; headers: { 'content-type'?: string | undefined } }): unknown {
  const body = request.body;
  const isYaml = typeof body === 'object' && body !== null && 'yaml' in body && Object.keys(body).length === 1 && /yaml/.test(request.headers['content-type'] ?? '');
  return isYaml ? policyFromYaml((body as { yaml: string }).yaml) : body;
}

/** A document that does not load answers 400 naming every problem. */
async function loading<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (error instanceof InvalidPolicy) throw new HttpProblem(400, 'invalid_policy', error.message, { problems: error.problems });
    throw error;
  }
}

export const policyApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime } = app.nomos;
  const deps = runtime.commandDeps;

  // YAML arrives as text (within the body limit) and is parsed by the route, so its errors name the line.
  app.addContentTypeParser(YAML_TYPES, { parseAs: 'string' }, (_request, text, parsed) => parsed(null, { yaml: String(text) }));

  app.get('/policy', { schema: GET_SCHEMA }, async () => {
    const current = await currentPolicy(deps);
    return current === null
      ? { version: 0, digest: null, rules: [], updated_at: null, updated_by: null }
      : { version: current.version, digest: current.digest, rules: current.policy.rules, updated_at: current.at, updated_by: current.by };
  });

  app.get('/policy/history', { schema: HISTORY_SCHEMA }, async () => ({
    versions: (await policyHistory(deps)).map((v) => ({ version: v.version, digest: v.digest, rules: v.policy.rules, at: v.at, by: v.by })),
  }));

  app.put('/policy', { schema: PUT_SCHEMA }, async (request) => {
    const ctx = commandContext(request, ['operator'], 'change the policy');
    return loading(() => applyPolicy(deps, documentOf(request), expectedVersion(request.headers['if-match']), ctx));
  });

  app.post('/policy/check', { schema: CHECK_SCHEMA }, async (request) => {
    const { verdict, reasons } = await runtime.executions.judge(request.body.command, request.body.target);
    return { decision: verdict.decision ?? 'ask', risk_class: verdict.risk_class, rule_id: verdict.rule_id ?? 'classifier', policy_version: verdict.policy_version ?? 0, reasons };
  });

  app.get('/policy/shadow', { schema: SHADOW_SCHEMA }, async (request) => {
    const { shadow } = await readPolicy(deps);
    if (shadow === null) return { shadow: null, decided: 0, diverged: 0, divergences: [] };
    const seen = await shadowDivergences(runtime.db, shadow.shadow, request.query.limit ?? 100);
    return { shadow: { shadow: shadow.shadow, digest: shadow.digest, rules: shadow.policy.rules, started_at: shadow.at, started_by: shadow.by }, ...seen };
  });

  app.put('/policy/shadow', { schema: SHADOW_PUT_SCHEMA }, async (request) => {
    const ctx = commandContext(request, ['operator'], 'run a policy in shadow');
    return loading(() => startShadow(deps, documentOf(request), ctx));
  });

  app.post('/policy/shadow/promote', { schema: PROMOTE_SCHEMA }, async (request) => {
    const ctx = commandContext(request, ['operator'], 'promote the policy in shadow');
    return promoteShadow(deps, expectedVersion(request.headers['if-match']), ctx);
  });

  app.delete('/policy/shadow', { schema: DROP_SCHEMA }, async (request) => {
    const ctx = commandContext(request, ['operator'], 'drop the policy in shadow');
    return dropShadow(deps, ctx);
  });

  done();
};
