// The knowledge read model: one row per runbook, investigation or note, with a weighted full-text search
// vector, and the queries the agent's tools and the API read it with.
//
//   KnowledgeRecorded  inserts the row (created_at)
//   KnowledgeUpdated   sets the fields that changed, and session_id
// Each one moves updated_at and rewrites the search vector.
import { z } from 'zod';
import type { Queryable } from '../ports/db.ts';
import { type KnowledgeEvent, KnowledgeKind, knowledgeEventSchemas, parseKnowledgeEvent } from '../domain/knowledge/events.ts';
import { knowledgeIdOf } from '../domain/knowledge/stream.ts';
import { eachEvent, type Projection } from './projection.ts';
import { occurredAt } from './rows.ts';

const TABLES_VERSION = 1;

/** Title weighs most, then tags, then the body: a word in the title ranks an item above one that only mentions it. */
const SEARCH_VECTOR = `setweight(to_tsvector('english', title), 'A')
  || setweight(to_tsvector('english', array_to_string(tags, ' ')), 'B')
  || setweight(to_tsvector('english', body), 'C')`;

// ---- the projection ----

async function applyEvent(tx: Queryable, id: string, e: KnowledgeEvent, at: string): Promise<void> {
  switch (e.type) {
    case 'KnowledgeRecorded': {
      const { kind, title, body, about, tags, session_id } = e.data;
      await tx.query(
        `INSERT INTO knowledge (id, kind, title, body, about, tags, session_id, created_at, updated_at, search)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, ''::tsvector) ON CONFLICT (id) DO NOTHING`,
        [id, kind, title, body, about, tags, session_id, at],
      );
      break;
    }
    case 'KnowledgeUpdated': {
      const { title, body, about, tags, session_id } = e.data;
      const params: unknown[] = [id, at, session_id];
      const sets = ['updated_at = $2', 'session_id = $3'];
      const set = (column: string, value: unknown) => sets.push(`${column} = $${params.push(value)}`);
      if (title !== undefined) set('title', title);
      if (body !== undefined) set('body', body);
      if (about !== undefined) set('about', about);
      if (tags !== undefined) set('tags', tags);
      await tx.query(`UPDATE knowledge SET ${sets.join(', ')} WHERE id = $1`, params);
      break;
    }
    default: {
      const unhandled: never = e;
      throw new Error(`knowledge projection: unhandled event ${JSON.stringify(unhandled)}`);
    }
  }
  // From the row as it now stands: an update may have changed only one of the weighted parts.
  await tx.query(`UPDATE knowledge SET search = ${SEARCH_VECTOR} WHERE id = $1`, [id]);
}

export const knowledgeProjection: Projection = {
  name: 'knowledge',
  version: TABLES_VERSION,
  tables: ['knowledge'],
  handles: new Set(Object.keys(knowledgeEventSchemas)),
  applyBatch: eachEvent(async (tx, event) => {
    const id = knowledgeIdOf(event.streamName);
    if (id === null) return;
    await applyEvent(tx, id, parseKnowledgeEvent(event.type, event.data), occurredAt(event));
  }),
};

// ---- queries ----

/** An item as lists show it: no body, a snippet of it instead. */
export interface KnowledgeSummary {
  id: string;
  kind: KnowledgeKind;
  title: string;
  about: string[];
  tags: string[];
  /** Search: the body's passages that match, matches in **bold**; otherwise the body's first 300 characters. */
  snippet: string;
  updated_at: string;
}

export interface KnowledgeHit extends KnowledgeSummary {
  /** ts_rank of the match: larger is better; comparable within one search only. */
  rank: number;
}

export interface KnowledgeView {
  id: string;
  kind: KnowledgeKind;
  title: string;
  body: string;
  about: string[];
  tags: string[];
  session_id: string | null;
  created_at: string;
  updated_at: string;
}

const SummaryRow = z.object({
  id: z.string(),
  kind: KnowledgeKind,
  title: z.string(),
  about: z.array(z.string()),
  tags: z.array(z.string()),
  snippet: z.string(),
  updated_at: z.date(),
});
const HitRow = SummaryRow.extend({ rank: z.number() });
const ItemRow = z.object({
  id: z.string(),
  kind: KnowledgeKind,
  title: z.string(),
  body: z.string(),
  about: z.array(z.string()),
  tags: z.array(z.string()),
  session_id: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});

export const SNIPPET_CHARS = 300;
export const MAX_SEARCH_RESULTS = 100;
const HEADLINE_OPTIONS = 'StartSel=**, StopSel=**, MinWords=15, MaxWords=40, MaxFragments=2, FragmentDelimiter=" … "';

/**
 * Items matching `query`, best first (ts_rank over title A, tags B, body C; then the newest). The query is
 * read as a web search box reads it (websearch_to_tsquery): words, "quoted phrases", `or`, `-excluded`;
 * it never fails to parse, whatever characters it holds. A query of stop words only matches nothing.
 */
export async function searchKnowledge(db: Queryable, query: string, limit = 10): Promise<KnowledgeHit[]> {
  const bounded = Math.min(Math.max(Math.trunc(limit), 1), MAX_SEARCH_RESULTS);
  // PostgreSQL text cannot hold NUL; as a separator it means nothing anyway.
  const text = query.replaceAll('\0', ' ');
  // The headline is costly, so it is made only for the rows that are returned.
  const { rows } = await db.query(
    `WITH q AS (SELECT websearch_to_tsquery('english', $1) AS q),
     hits AS (
       SELECT k.id, k.kind, k.title, k.about, k.tags, k.body, k.updated_at, ts_rank(k.search, q.q) AS rank
       FROM knowledge k, q WHERE k.search @@ q.q
       ORDER BY rank DESC, k.updated_at DESC, k.id LIMIT $2
     )
     SELECT id, kind, title, about, tags, ts_headline('english', body, q.q, $3) AS snippet, updated_at, rank
     FROM hits, q ORDER BY rank DESC, updated_at DESC, id`,
    [text, bounded, HEADLINE_OPTIONS],
  );
  return rows.map((raw) => {
    const { updated_at, ...row } = HitRow.parse(raw);
    return { ...row, updated_at: updated_at.toISOString() };
  });
}

/** Items about `slug`: runbooks first, then investigations, then notes; the newest first within each. */
export async function getEntityKnowledge(db: Queryable, slug: string, limit = 100): Promise<KnowledgeSummary[]> {
  const { rows } = await db.query(
    `SELECT id, kind, title, about, tags, left(body, $3) AS snippet, updated_at FROM knowledge
     WHERE about @> ARRAY[$1]::text[]
     ORDER BY CASE kind WHEN 'runbook' THEN 0 WHEN 'investigation' THEN 1 ELSE 2 END, updated_at DESC, id
     LIMIT $2`,
    [slug, Math.max(1, Math.trunc(limit)), SNIPPET_CHARS],
  );
  return rows.map((raw) => {
    const { updated_at, ...row } = SummaryRow.parse(raw);
    return { ...row, updated_at: updated_at.toISOString() };
  });
}

/** The latest items: runbooks first, then investigations, then notes; the newest first within each. */
export async function listKnowledge(db: Queryable, limit = 100): Promise<KnowledgeSummary[]> {
  const { rows } = await db.query(
    `SELECT id, kind, title, about, tags, left(body, $2) AS snippet, updated_at FROM knowledge
     ORDER BY CASE kind WHEN 'runbook' THEN 0 WHEN 'investigation' THEN 1 ELSE 2 END, updated_at DESC, id
     LIMIT $1`,
    [Math.min(Math.max(1, Math.trunc(limit)), MAX_SEARCH_RESULTS), SNIPPET_CHARS],
  );
  return rows.map((raw) => {
    const { updated_at, ...row } = SummaryRow.parse(raw);
    return { ...row, updated_at: updated_at.toISOString() };
  });
}

/** One whole item, body included; null for an id never recorded. */
export async function getKnowledge(db: Queryable, id: string): Promise<KnowledgeView | null> {
  const { rows } = await db.query(
    'SELECT id, kind, title, body, about, tags, session_id, created_at, updated_at FROM knowledge WHERE id = $1',
    [id],
  );
  if (rows[0] === undefined) return null;
  const { created_at, updated_at, ...row } = ItemRow.parse(rows[0]);
  return { ...row, created_at: created_at.toISOString(), updated_at: updated_at.toISOString() };
}
