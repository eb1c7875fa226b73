// The operator's policy over HTTP: read it and its history, replace it (operators only; JSON or YAML; If-Match with
// the version it was read at, 409 when another change came first), and check what it decides for a command on a
// target beside the classifier's verdict. A document that does not load answers 400 naming each rule and example,
// and changes nothing. Not yet consulted by `run` (issue 34 wires it in).
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import YAML from 'yaml';
import { z } from 'zod';
import { InvalidPolicy, applyPolicy, currentPolicy, policyHistory } from '../commands/policy.ts';
import { CommandText } from '../domain/command-text.ts';
import { decide } from '../domain/policy/index.ts';
import { RiskClass } from '../domain/session/events.ts';
import { commandContext } from './context.ts';
import { HttpProblem } from './errors.ts';
import { BODY, CALLER, WRITE } from './responses.ts';
import { Time } from './views.ts';

const TAGS = ['policy'];
const Rules = z.array(z.unknown()).describe('the rules: {id, match, targets?, decision: allow|ask|deny, justification, examples?: {match, not_match}}');
const Who = z.unknown().describe('the actor who applied it ({role, id})');
const Slug = z.string().min(3).max(200).regex(/^[a-z]+:[A-Za-z0-9._-]+$/, 'must be an entity slug such as host:strong or lxc:rclone');

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
  body: z.strictObject({ command: CommandText.min(1), target: Slug }),
  response: {
    200: z.object({ decision: z.enum(['allow', 'ask', 'deny']), risk_class: RiskClass, rule_id: z.string(), policy_version: z.number().int(), reasons: z.array(z.string()) }),
    ...CALLER,
    ...BODY,
  },
};

/** If-Match as a client writes it: 3, "3" or W/"3". */
function expectedVersion(header: string | undefined): number | null {
  if (header === undefined) return null;
  const version = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(header)?.[1];
  if (version === undefined) throw new HttpProblem(400, 'invalid_if_match', `If-Match takes the policy's version (GET /policy), such as If-Match: "3"; got ${JSON.stringify(header.slice(0, 40))}`);
  return Number(version);
}

/** A YAML body, parsed; broken YAML is a 400 naming the line. */
function fromYaml(text: string): unknown {
  const document = YAML.parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const error = document.errors[0];
  if (error !== undefined) {
    const where = error.linePos?.[0] ? `line ${error.linePos[0].line}, column ${error.linePos[0].col}: ` : '';
    throw new HttpProblem(400, 'invalid_yaml', `the policy is not valid YAML: ${where}${error.message.split('\n')[0] ?? ''}`);
  }
  try {
    return document.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (error) {
    // Aliases that multiply (a billion laughs) stop here, as the library refuses them.
    throw new HttpProblem(400, 'invalid_yaml', `the policy is not usable YAML: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export const policyApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime } = app.nomos;
  const deps = runtime.commandDeps;

  // YAML arrives as text (within the body limit) and is parsed by the route, so its errors name the line.
  app.addContentTypeParser(['application/yaml', 'application/x-yaml', 'text/yaml'], { parseAs: 'string' }, (_request, text, parsed) => parsed(null, { yaml: String(text) }));

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
    const body = request.body;
    const isYaml = typeof body === 'object' && body !== null && 'yaml' in body && Object.keys(body).length === 1 && /yaml/.test(request.headers['content-type'] ?? '');
    const document = isYaml ? fromYaml((body as { yaml: string }).yaml) : body;
    try {
      return await applyPolicy(deps, document, expectedVersion(request.headers['if-match']), ctx);
    } catch (error) {
      if (error instanceof InvalidPolicy) throw new HttpProblem(400, 'invalid_policy', error.message, { problems: error.problems });
      throw error;
    }
  });

  app.post('/policy/check', { schema: CHECK_SCHEMA }, async (request) => {
    const { command, target } = request.body;
    const [verdict, current] = await Promise.all([runtime.executions.classify(command), currentPolicy(deps)]);
    const decided = decide(current?.policy ?? null, command, target, verdict);
    return { decision: decided.decision, risk_class: verdict.risk_class, rule_id: decided.rule_id, policy_version: current?.version ?? 0, reasons: decided.reasons };
  });

  done();
};
