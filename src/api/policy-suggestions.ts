// GET /policy/suggestions: allow rules for the commands operators approve again and again, each with its evidence
// from the log and the what-if of the policy in force with it added. Operators and auditors may read them (it
// changes nothing, and appends no event); an agent may not. Adopting one is a PUT /policy like any other.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DEFAULT_SUGGESTIONS, MAX_SUGGESTIONS, policySuggestions } from '../commands/policy-suggestions.ts';
import { DEFAULT_MIN_APPROVALS, PolicyRule } from '../domain/policy/index.ts';
import { HttpProblem } from './errors.ts';
import { MinPosition, asOfPosition, awaitPosition, stamp } from './freshness.ts';
import { CALLER, LAG, ROLE } from './responses.ts';
import { AsOf, Time } from './views.ts';

// The approvals and, for the what-if, the executions.
const READS = ['executions'];
const Count = z.number().int().nonnegative();

const Evidence = z.object({
  approvals: Count.describe('grants of commands the rule would now let run at once (deleted sessions not counted)'),
  denials: Count.describe('denials of commands the rule matches on its targets: always 0, as a rule matching one is never suggested'),
  sessions: Count.describe('distinct sessions of those grants'),
  expired: Count.describe('approvals of commands the rule matches on its targets that expired unanswered'),
  median_wait_s: z.number().nullable().describe('median seconds from the approval being requested to its grant'),
});

const Samples = z.array(z.unknown()).describe('executions, each as POST /policy/what-if lists them');
const WhatIf = z
  .object({
    replayed: Count,
    from: Time.nullable(),
    to: Time.nullable(),
    changes: z.object({ unchanged: Count, newly_allowed: Count, newly_asked: Count, newly_denied: Count }),
    samples: z.object({ newly_allowed: Samples, newly_asked: Samples, newly_denied: Samples }),
    flags: z.object({ allowed_once_denied: Samples, allowed_once_failed: Samples }),
    flag_counts: z.object({ allowed_once_denied: Count, allowed_once_failed: Count }),
    commands: Count,
  })
  .describe('what POST /policy/what-if answers for the policy in force with this rule added (5 samples per change); its flags are empty, as a rule they would name is never suggested');

const SUGGESTIONS_SCHEMA = {
  summary: 'Allow rules suggested by the approvals in the log',
  tags: ['policy'],
  description: `Operators and auditors. The commands approved at least \`min_approvals\` times (default ${DEFAULT_MIN_APPROVALS}), never denied on the targets they were approved on, with no approved run that failed or timed out, and nothing the classifier judges destructive or cannot see: each group as the narrowest allow rule over them (their words as a prefix, alternatives in one word where the rest agree, their exact targets), with \`examples.match\` from the approved commands and \`examples.not_match\` from denied commands sharing its first words. Each rule loads beside the policy in force (one that does not is left out) and carries its what-if. The most approved first, at most \`limit\`. Appends no event; adopt one with PUT /policy.`,
  querystring: z.strictObject({
    min_approvals: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_MIN_APPROVALS),
    limit: z.coerce.number().int().min(1).max(MAX_SUGGESTIONS).default(DEFAULT_SUGGESTIONS),
    min_position: MinPosition,
  }),
  response: {
    200: z.object({ suggestions: z.array(z.object({ rule: PolicyRule, evidence: Evidence, what_if: WhatIf })), ...AsOf }),
    ...CALLER,
    ...ROLE,
    ...LAG,
  },
};

export const policySuggestionsApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime, readWaitMs } = app.nomos;

  app.get('/policy/suggestions', { schema: SUGGESTIONS_SCHEMA }, async (request, reply) => {
    // What operators approved and denied is for the people who answer for it; the agent asking would be gaming its own leash.
    if (request.principal.role === 'agent') throw new HttpProblem(403, 'forbidden', 'role agent may not read policy suggestions (allowed: operator, auditor)');
    const { min_approvals: minApprovals, limit, min_position: minPosition } = request.query;
    await awaitPosition(runtime, READS, minPosition, readWaitMs);
    const asOf = await asOfPosition(runtime, READS);
    const result = await policySuggestions(runtime.commandDeps, runtime.classifier, { minApprovals, limit });
    stamp(reply, asOf);
    return { ...result, as_of_position: asOf };
  });

  done();
};
