// Redacts a secret from one of a session's events: PayloadRedacted is appended to the session's redactions stream
// (who, when, why, and the SHA-256 the sealed leaf commits to), then, in one transaction, the stored payload is
// replaced by its redacted copy (the only change the events table's trigger lets through, and only there) and the
// read models' rows of the session are redacted alike, so that they stay the fold of the redacted log.
import { eventMetadata, NotFound } from '../domain/messages.ts';
import { decideRedaction, PayloadRedacted, REDACTED_MARK, redactionStream, redactValue } from '../domain/log/redaction.ts';
import { sessionStream } from '../domain/session/stream.ts';
import { dataHash } from '../log/leaf.ts';
import type { Db, Queryable } from '../ports/db.ts';
import { type CommandContext, type CommandDeps, commandMetadata } from './context.ts';

export interface RedactionAsked {
  readonly sessionId: string;
  readonly position: number;
  readonly text: string;
  readonly reason: string;
}

export interface Redacted {
  /** The PayloadRedacted event's position. */
  readonly redactionPosition: number;
  readonly occurrences: number;
  readonly dataSha256: string;
  /** Read-model rows changed, by table. */
  readonly rows: Record<string, number>;
}

interface EventRow {
  stream_name: string;
  type: string;
  data: unknown;
}

/** `tables`: the read models' tables (the projections'); a session's rows are those whose session_id is it (sessions: id). */
export async function redactPayload(deps: CommandDeps, db: Db, tables: readonly string[], ctx: CommandContext, asked: RedactionAsked): Promise<Redacted> {
  const { rows } = await db.query<EventRow>('SELECT stream_name, type, data FROM events WHERE global_position = $1', [asked.position]);
  const event = rows[0];
  if (!event || event.stream_name !== sessionStream(asked.sessionId)) {
    throw new NotFound('event', `no event at position ${asked.position} in session ${asked.sessionId}`, 'event_not_in_session');
  }
  const { data, occurrences } = decideRedaction(event.data, asked.text);
  const recorded: PayloadRedacted = { session_id: asked.sessionId, position: asked.position, event_type: event.type, data_sha256: dataHash(event.data), reason: asked.reason, occurrences };
  const meta = commandMetadata(deps, ctx);
  const appended = await deps.store.append(redactionStream(asked.sessionId), [{ type: 'PayloadRedacted', data: PayloadRedacted.parse(recorded), metadata: eventMetadata(meta) }], { expectedVersion: 'any' });
  const changed: Record<string, number> = {};
  await db.transaction(async (tx) => {
    await tx.query("SELECT set_config('nomos.redacting', 'on', true)");
    await tx.query('UPDATE events SET data = $1 WHERE global_position = $2', [JSON.stringify(data), asked.position]);
    for (const table of tables) changed[table] = await redactRows(tx, table, asked.sessionId, asked.text);
  });
  return { redactionPosition: appended.position, occurrences, dataSha256: recorded.data_sha256, rows: changed };
}

/**
 * Replaces the secret in the session's rows of one table: in text and text-array columns by SQL, in JSON columns
 * value by value (redactValue), so that no key and no piece of the JSON's structure can be hit.
 */
async function redactRows(tx: Queryable, table: string, sessionId: string, secret: string): Promise<number> {
  const { rows: all } = await tx.query<{ name: string; type: string; generated: string }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attgenerated AS generated FROM pg_attribute a
      WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped`,
    [table],
  );
  const sessionColumn = all.some((c) => c.name === 'session_id') ? 'session_id' : table === 'sessions' ? 'id' : null;
  const columns = all.filter((c) => c.generated === '' && c.name !== sessionColumn && ['text', 'jsonb', 'json', 'text[]'].includes(c.type));
  // Tables of other aggregates (entities, knowledge) hold no session's rows.
  if (sessionColumn === null || columns.length === 0) return 0;
  const changed = new Set<string>();
  const texts = columns.filter((c) => c.type === 'text' || c.type === 'text[]');
  if (texts.length > 0) {
    const set = texts.map(({ name, type }) =>
      type === 'text'
        ? `"${name}" = replace("${name}", $2, $3)`
        : `"${name}" = CASE WHEN "${name}" IS NULL THEN NULL ELSE COALESCE((SELECT array_agg(replace(x, $2, $3) ORDER BY i) FROM unnest("${name}") WITH ORDINALITY AS u(x, i)), '{}') END`,
    );
    const touched = texts.map(({ name, type }) => (type === 'text' ? `strpos("${name}", $2) > 0` : `EXISTS (SELECT 1 FROM unnest("${name}") x WHERE strpos(x, $2) > 0)`));
    const { rows } = await tx.query<{ row: string }>(`UPDATE ${table} SET ${set.join(', ')} WHERE "${sessionColumn}" = $1 AND (${touched.join(' OR ')}) RETURNING ctid::text AS row`, [sessionId, secret, REDACTED_MARK]);
    for (const r of rows) changed.add(r.row);
  }
  for (const { name, type } of columns.filter((c) => c.type === 'json' || c.type === 'jsonb')) {
    const { rows } = await tx.query<{ row: string; value: unknown }>(`SELECT ctid::text AS row, "${name}"::jsonb AS value FROM ${table} WHERE "${sessionColumn}" = $1 AND strpos("${name}"::text, $2) > 0`, [sessionId, JSON.stringify(secret).slice(1, -1)]);
    for (const r of rows) {
      const { value, occurrences } = redactValue(r.value, secret);
      if (occurrences === 0) continue;
      const written = await tx.query<{ row: string }>(`UPDATE ${table} SET "${name}" = $2::${type} WHERE ctid = $1::tid RETURNING ctid::text AS row`, [r.row, JSON.stringify(value)]);
      for (const w of written.rows) changed.add(w.row);
    }
  }
  return changed.size;
}
