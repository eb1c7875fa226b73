// POST /policy/what-if: a candidate policy tried against every command ever requested, before anyone switches it
// on. Operators and auditors may ask (it changes nothing, and appends no event); an agent may not. A candidate
// that does not load answers 400 invalid_policy naming each rule and example, as PUT /policy does; the candidate
// may come as JSON `{policy: {rules}}`, or as YAML (the document itself, or under `policy:`).
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { InvalidPolicy } from '../commands/policy.ts';
import { whatIf } from '../commands/policy-what-if.ts';
import { Actor } from '../domain/messages.ts';
import { DECISIONS, loadPolicy } from '../domain/policy/index.ts';
import { HttpProblem } from './errors.ts';
import { MinPosition, asOfPosition, awaitPosition, stamp } from './freshness.ts';
import { YAML_TYPES, policyFromYaml } from './policy-body.ts';
import { BODY, CALLER, LAG, ROLE } from './responses.ts';
import { AsOf, Time } from './views.ts';

const READS = ['executions'];
const Decision = z.enum(DECISIONS);
const Count = z.number().int().nonnegative();

const Sample = z.object({
  execution_id: z.string(),
  session_id: z.string(),
  target: z.string(),
  command: z.string(),
  at: Time.describe('when it was requested'),
  decision_then: Decision.describe("today's classifier with the policy in force when it was requested"),
  decision_now: Decision.describe("today's classifier with the candidate"),
  rule_id: z.string().describe('what decides under the candidate: a rule id, classifier or floor'),
  policy_version_then: Count.describe('the policy version in force then (0: none)'),
  decided_by: Actor.nullable().describe('who approved or denied its approval; null when nobody did'),
  outcome: z.string().describe("the execution's status: succeeded, failed, timed_out, denied, expired, refused, …"),
});

const WHAT_IF_SCHEMA = {
  summary: 'What a candidate policy would have changed over every command ever requested',
  tags: ['policy'],
  description:
    "Operators and auditors. Replays every execution in the read model (deleted sessions' too) under today's classifier, with the policy in force when it was requested and with the candidate; counts each change, lists the newest executions of each (at most 20) and, flagged, the newly allowed ones an operator once denied or whose run failed or timed out (at most 50 each; `flag_counts` has the totals). Appends no event. The candidate as JSON `{policy: {rules}}`, or as YAML (content-type application/yaml); one that does not load answers 400 invalid_policy.",
  querystring: z.strictObject({ min_position: MinPosition }),
  body: z.strictObject({ policy: z.unknown().describe('the candidate: {rules: [...]}, as PUT /policy takes it') }),
  response: {
    200: z.object({
      replayed: Count.describe('past executions replayed'),
      from: Time.nullable().describe('when the oldest was requested (null: none)'),
      to: Time.nullable().describe('when the newest was requested'),
      changes: z.object({ unchanged: Count, newly_allowed: Count, newly_asked: Count, newly_denied: Count }),
      samples: z.object({ newly_allowed: z.array(Sample), newly_asked: z.array(Sample), newly_denied: z.array(Sample) }),
      flags: z.object({
        allowed_once_denied: z.array(Sample).describe('newly allowed, and an operator denied its approval'),
        allowed_once_failed: z.array(Sample).describe('newly allowed, and its run failed or timed out'),
      }),
      flag_counts: z.object({ allowed_once_denied: Count, allowed_once_failed: Count }),
      commands: Count.describe('distinct commands replayed'),
      ...AsOf,
    }),
    ...CALLER,
    ...ROLE,
    ...BODY,
    ...LAG,
  },
};

/** A YAML candidate: the document itself, or `{policy: document}` as the JSON body has it. */
function yamlCandidate(text: string): { policy: unknown } {
  const parsed = policyFromYaml(text);
  const wrapped = typeof parsed === 'object' && parsed !== null && Object.keys(parsed).length === 1 && 'policy' in parsed;
  return wrapped ? { policy: parsed.policy } : { policy: parsed };
}

export const policyWhatIfApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime, readWaitMs } = app.nomos;

  app.addContentTypeParser(YAML_TYPES, { parseAs: 'string' }, (_request, text, parsed) => {
    try {
      parsed(null, yamlCandidate(String(text)));
    } catch (error) {
      parsed(error as Error, undefined);
    }
  });

  app.post('/policy/what-if', { schema: WHAT_IF_SCHEMA }, async (request, reply) => {
    // Reading the whole history is for the people who answer for it; it writes nothing, so auditors may.
    if (request.principal.role === 'agent') throw new HttpProblem(403, 'forbidden', 'role agent may not run a policy what-if (allowed: operator, auditor)');
    const loaded = loadPolicy(request.body.policy);
    if (!loaded.ok) throw new HttpProblem(400, 'invalid_policy', new InvalidPolicy(loaded.problems).message, { problems: loaded.problems });
    await awaitPosition(runtime, READS, request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, READS);
    const result = await whatIf(runtime.commandDeps, runtime.classifier, loaded.policy);
    stamp(reply, asOf);
    return { ...result, as_of_position: asOf };
  });

  done();
};
