// What the agent's model calls cost: a session's calls one by one (failed ones with their error), and totals by
// model, day or session. Tokens are the provider's figures; a cost is shown only where NOMOS_MODEL_PRICES prices
// every model involved.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { costOf, costOfAll } from '../domain/usage/prices.ts';
import { UsageGroup, listModelCalls, usageRows } from '../projections/model-calls.ts';
import { IncludeDeleted, includesDeleted, readableSession } from './deleted.ts';
import { MinPosition, asOfPosition, awaitPosition, stamp } from './freshness.ts';
import { CALLER, LAG, notFound } from './responses.ts';
import { SinceQuery } from './since.ts';
import { AsOf, Time } from './views.ts';

const TAGS = ['agent'];
const Tokens = z.number().int().nonnegative().nullable();
const Cost = { cost: z.number().nullable().optional().describe('priced by NOMOS_MODEL_PRICES; absent when no prices are configured, null when a model has none') };

const ModelCallRow = z.object({
  call_id: z.string(),
  turn_id: z.string(),
  attempt: z.number().int(),
  at: Time,
  model: z.string(),
  provider_host: z.string(),
  input_tokens: Tokens,
  output_tokens: Tokens,
  cached_input_tokens: Tokens,
  estimated_input_tokens: z.number().int(),
  duration_ms: z.number().int(),
  first_token_ms: z.number().int().nullable(),
  finish_reason: z.string().nullable(),
  context: z.object({ budget_tokens: z.number().int(), estimated_tokens: z.number().int(), messages: z.number().int(), elided_results: z.number().int(), folded_turns: z.number().int() }),
  error: z.object({ kind: z.string(), status: z.number().int().nullable(), code: z.string().nullable(), message: z.string() }).nullable(),
  ...Cost,
});

const Totals = { model_calls: z.number().int(), failed_calls: z.number().int(), input_tokens: Tokens, output_tokens: Tokens, cached_input_tokens: Tokens, ...Cost };

const MODEL_CALLS_SCHEMA = {
  summary: "A session's model calls",
  tags: TAGS,
  description: 'A JSON array, one row per model call in the order they were made, failed calls included with their error.',
  params: z.strictObject({ id: z.uuid({ error: 'session id must be a UUID' }) }),
  querystring: z.strictObject({ min_position: MinPosition, include_deleted: IncludeDeleted }),
  response: { 200: z.array(ModelCallRow), ...CALLER, ...notFound('No such session (session_not_found, session_deleted)'), ...LAG },
};

const USAGE_SCHEMA = {
  summary: 'Model usage totals',
  tags: TAGS,
  description: 'Tokens and calls since a time (every call without since), by model, day (UTC) or session; each group lists its models.',
  querystring: z.strictObject({
    since: z.preprocess((v) => (v === '' ? undefined : v), SinceQuery.optional()),
    group_by: UsageGroup.default('model'),
    include_deleted: IncludeDeleted,
    min_position: MinPosition,
  }),
  response: {
    200: z.object({
      since: Time.nullable(),
      group_by: UsageGroup,
      groups: z.array(z.object({ key: z.string(), ...Totals, models: z.array(z.object({ model: z.string(), ...Totals })) })),
      totals: z.object(Totals),
      ...AsOf,
    }),
    ...CALLER,
    ...LAG,
  },
};

type Summed = { model_calls: number; failed_calls: number; input_tokens: number | null; output_tokens: number | null; cached_input_tokens: number | null };

const add = (a: number | null, b: number | null) => (b === null ? a : (a ?? 0) + b);

function sum(rows: readonly Summed[]): Summed {
  const total: Summed = { model_calls: 0, failed_calls: 0, input_tokens: null, output_tokens: null, cached_input_tokens: null };
  for (const row of rows) {
    total.model_calls += row.model_calls;
    total.failed_calls += row.failed_calls;
    total.input_tokens = add(total.input_tokens, row.input_tokens);
    total.output_tokens = add(total.output_tokens, row.output_tokens);
    total.cached_input_tokens = add(total.cached_input_tokens, row.cached_input_tokens);
  }
  return total;
}

export const usageApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime, readWaitMs } = app.nomos;
  const prices = runtime.modelPrices;
  const priced = Object.keys(prices).length > 0;

  app.get('/sessions/:id/model_calls', { schema: MODEL_CALLS_SCHEMA }, async (request, reply) => {
    const { id } = request.params;
    await awaitPosition(runtime, ['sessions', 'model_calls'], request.query.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, ['sessions', 'model_calls']);
    await readableSession(runtime.db, id, request.query.include_deleted, request.principal.role);
    const calls = await listModelCalls(runtime.db, id);
    stamp(reply, asOf);
    return priced ? calls.map((call) => ({ ...call, cost: costOf(prices, call.model, call) })) : calls;
  });

  app.get('/usage', { schema: USAGE_SCHEMA }, async (request, reply) => {
    const q = request.query;
    await awaitPosition(runtime, ['model_calls'], q.min_position, readWaitMs);
    const asOf = await asOfPosition(runtime, ['model_calls']);
    const includeDeleted = includesDeleted(q.include_deleted, request.principal.role);
    const rows = await usageRows(runtime.db, { since: q.since ?? null, groupBy: q.group_by, includeDeleted });
    const byKey = new Map<string, typeof rows>();
    for (const row of rows) {
      const group = byKey.get(row.key);
      if (group === undefined) byKey.set(row.key, [row]);
      else group.push(row);
    }
    const groups = [...byKey].map(([key, models]) => ({
      key,
      ...sum(models),
      ...(priced && { cost: costOfAll(prices, models) }),
      models: models.map(({ key: _key, ...model }) => ({ ...model, ...(priced && { cost: costOf(prices, model.model, model) }) })),
    }));
    stamp(reply, asOf);
    return {
      since: q.since?.toISOString() ?? null,
      group_by: q.group_by,
      groups,
      totals: { ...sum(rows), ...(priced && { cost: costOfAll(prices, rows) }) },
      as_of_position: asOf,
    };
  });

  done();
};
