// The model calls read model: one row per ModelCallRecorded event (failed calls too, with their error), and the
// queries that read it: a session's calls in order, and usage totals by model, day or session.
//
//   ModelCallRecorded  inserts the call (a call already there is kept)
//   SessionDeleted     marks the session's calls session_deleted: they stay for operators and auditors
//
// Costs are not stored: prices change, and the tokens do not (src/domain/usage/prices.ts prices them as read).
import { z } from 'zod';
import type { Queryable, Transaction } from '../ports/db.ts';
import type { ProjectedEvent } from '../ports/event-store.ts';
import type { ModelCall } from '../domain/session/events.ts';
import type { Projection } from './projection.ts';
import { occurredAt, pgJson, sessionEventsIn } from './rows.ts';

const MODEL_CALLS_VERSION = 1;

function applyBatch(tx: Transaction, events: readonly ProjectedEvent[]): Promise<void> {
  for (const { sessionId, event, stored } of sessionEventsIn(events)) {
    if (event.type === 'ModelCallRecorded') {
      const c = event.data;
      tx.send(
        `INSERT INTO model_calls (call_id, session_id, turn_id, attempt, position, at, model, provider_host, input_tokens, output_tokens,
           cached_input_tokens, estimated_input_tokens, duration_ms, first_token_ms, finish_reason, context, error)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16::jsonb, $17::jsonb) ON CONFLICT (call_id) DO NOTHING`,
        [c.call_id, sessionId, c.turn_id, c.attempt, stored.position, occurredAt(stored), c.model, c.provider_host, c.input_tokens, c.output_tokens,
          c.cached_input_tokens, c.estimated_input_tokens, c.duration_ms, c.first_token_ms, c.finish_reason, pgJson(c.context), pgJson(c.error)],
      );
    } else if (event.type === 'SessionDeleted') {
      tx.send('UPDATE model_calls SET session_deleted = true WHERE session_id = $1', [sessionId]);
    }
  }
  return Promise.resolve();
}

export const modelCallsProjection: Projection = {
  name: 'model_calls',
  version: MODEL_CALLS_VERSION,
  tables: ['model_calls'],
  handles: new Set(['ModelCallRecorded', 'SessionDeleted']),
  applyBatch,
};

// ---- queries ----

export type ModelCallView = ModelCall & { at: string };

/** float8: a JSON number from pg (bigint would come back as a string), exact below 2^53. */
const VIEW = `call_id, turn_id, attempt, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, model, provider_host,
  input_tokens::float8 AS input_tokens, output_tokens::float8 AS output_tokens, cached_input_tokens::float8 AS cached_input_tokens,
  estimated_input_tokens::float8 AS estimated_input_tokens, duration_ms, first_token_ms, finish_reason, context, error`;

/** A session's model calls in the order they were made. */
export async function listModelCalls(db: Queryable, sessionId: string): Promise<ModelCallView[]> {
  const { rows } = await db.query<ModelCallView>(`SELECT ${VIEW} FROM model_calls WHERE session_id = $1 ORDER BY position`, [sessionId]);
  return rows;
}

export const UsageGroup = z.enum(['model', 'day', 'session']);
export type UsageGroup = z.infer<typeof UsageGroup>;

/** Totals of one group and one model in it (a day or a session may have used several models). */
export interface UsageRow {
  key: string;
  model: string;
  model_calls: number;
  failed_calls: number;
  input_tokens: number | null;
  output_tokens: number | null;
  cached_input_tokens: number | null;
}

const GROUP_KEY: Record<UsageGroup, string> = {
  model: 'model',
  day: `to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  session: 'session_id',
};

/** Totals since a time (every call when null), per group and model, groups in key order. Deleted sessions' calls only when asked. */
export async function usageRows(db: Queryable, options: { since: Date | null; groupBy: UsageGroup; includeDeleted: boolean }): Promise<UsageRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (options.since !== null) where.push(`at >= $${params.push(options.since.toISOString())}`);
  if (!options.includeDeleted) where.push('NOT session_deleted');
  const key = GROUP_KEY[options.groupBy];
  const { rows } = await db.query<UsageRow>(
    `SELECT ${key} AS key, model, count(*)::int AS model_calls, count(error)::int AS failed_calls,
       sum(input_tokens)::float8 AS input_tokens, sum(output_tokens)::float8 AS output_tokens, sum(cached_input_tokens)::float8 AS cached_input_tokens
     FROM model_calls ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
     GROUP BY 1, 2 ORDER BY ${key} COLLATE "C", model COLLATE "C"`,
    params,
  );
  return rows;
}

/** A session's tokens by model: what its cost is priced from. */
export async function sessionUsageByModel(db: Queryable, sessionId: string): Promise<UsageRow[]> {
  const { rows } = await db.query<UsageRow>(
    `SELECT session_id AS key, model, count(*)::int AS model_calls, count(error)::int AS failed_calls,
       sum(input_tokens)::float8 AS input_tokens, sum(output_tokens)::float8 AS output_tokens, sum(cached_input_tokens)::float8 AS cached_input_tokens
     FROM model_calls WHERE session_id = $1 GROUP BY 1, 2 ORDER BY model COLLATE "C"`,
    [sessionId],
  );
  return rows;
}

export interface ProviderErrorView {
  at: string;
  session_id: string;
  model: string;
  provider_host: string;
  status: number | null;
  code: string | null;
  message: string;
}

/** The newest failed model call, across every server sharing the database (what the System page shows). */
export async function lastProviderError(db: Queryable): Promise<ProviderErrorView | null> {
  const { rows } = await db.query<ProviderErrorView>(
    `SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, session_id, model, provider_host,
       (error->>'status')::int AS status, error->>'code' AS code, error->>'message' AS message
     FROM model_calls WHERE error IS NOT NULL ORDER BY position DESC LIMIT 1`,
  );
  return rows[0] ?? null;
}
