// `nomos verify`'s check of the log itself: every event's leaf recomputed and walked against the leaves the
// sealer stored, the roots at every checkpoint recomputed from the events and from the stored tree and compared
// with the signed roots, every signature checked. It names what it finds: the first edited event, a deleted one,
// one inserted after sealing, a swapped pair, a checkpoint that does not verify, a stored tree someone rewrote.
import type { KeyObject } from 'node:crypto';
import type { Queryable } from '../ports/db.ts';
import { type LeafColumns, type LeafEvent, type Redaction, columnEvent, columnLeafHashes, leafOf } from './leaf.ts';
import { LeafPool, defaultLeafThreads } from './leaf-pool.ts';
import { Frontier, HASH_BYTES, leafHash } from './merkle.ts';
import { openNote } from './note.ts';
import { allRedactions, eventColumnsAfter, sealState, sealedEvent } from './store.ts';

export type ChainFinding =
  | { readonly kind: 'edited'; readonly position: number; readonly leaf_index: number; readonly stream: string; readonly type: string }
  | { readonly kind: 'deleted'; readonly position: number; readonly leaf_index: number }
  | { readonly kind: 'inserted'; readonly position: number; readonly stream: string; readonly type: string }
  | { readonly kind: 'swapped'; readonly positions: readonly [number, number] }
  | { readonly kind: 'bad_checkpoint'; readonly tree_size: number; readonly reason: string }
  | { readonly kind: 'root_mismatch'; readonly tree_size: number; readonly of: 'events' | 'stored_tree' }
  | { readonly kind: 'tree_broken'; readonly detail: string }
  /** Not tampering: a payload redacted through the API, its leaf still proven by the hash PayloadRedacted kept. */
  | { readonly kind: 'redacted'; readonly position: number; readonly by: unknown; readonly reason: string; readonly redaction_position: number };

/** Whether a finding says the log was changed (a redaction does not). */
export const isTampering = (f: ChainFinding): boolean => f.kind !== 'redacted';

export interface ChainReport {
  readonly events: number;
  readonly leaves: number;
  readonly unsealed: number;
  readonly checkpoints: number;
  readonly origin: string;
  readonly findings: readonly ChainFinding[];
  /** Findings past this many are counted, not listed. */
  readonly more: number;
}

const PAGE = 2_000;
const MAX_FINDINGS = 100;
const ZERO: Buffer = Buffer.alloc(HASH_BYTES);

/**
 * Pages of a walk, each item visited in turn: step() moves within the page without awaiting anything (a walk
 * over millions of events awaits a promise a page, not an event), turn() reads the next page when it is spent.
 */
class Pages<P> {
  page: P | null = null;
  i = -1;
  constructor(
    private readonly length: (page: P) => number,
    private readonly read: () => Promise<P | null>,
  ) {}

  /** The next item, when this page holds it. */
  step(): boolean {
    return this.page !== null && ++this.i < this.length(this.page);
  }

  /** The first item of the next page that holds one; false at the end. */
  async turn(): Promise<boolean> {
    for (;;) {
      this.page = await this.read();
      this.i = 0;
      if (this.page === null) return false;
      if (this.length(this.page) > 0) return true;
    }
  }
}

/** Stored leaves as columns: their indexes and positions, their level-0 hashes (zeros where none or not 32 bytes). */
interface LeafPage {
  readonly indexes: Float64Array;
  readonly positions: Float64Array;
  readonly hashes: Buffer;
  /** The leaves of the page whose level-0 node is missing, and those whose hash is not 32 bytes. */
  readonly unhashed: ReadonlySet<number>;
  readonly missized: ReadonlySet<number>;
}

const indexSet = (text: string | null): Set<number> => new Set(text === null ? [] : text.split(',').map(Number));

/**
 * The stored leaves in index order, with their level-0 hashes, read a range of `size` indexes at a time (and one
 * range ahead) up to the highest index the table holds: a missing leaf is a finding, not the end. Each range is
 * bounded on both tables so that no page sorts the nodes past it. A range comes as one row of aggregates, the hashes
 * in one bytea: as fast as its rows for leaves this small (measured), and no Buffer a leaf. The aggregates take the
 * rows in the one order the sub-select gives them; the page is refused unless its indexes are in order and every
 * column holds as many values.
 */
async function leafPages(db: Queryable, size: number): Promise<() => Promise<LeafPage | null>> {
  const { rows } = await db.query<{ end: string | null }>('SELECT max(leaf_index) + 1 AS end FROM log_leaves');
  const end = Number(rows[0]?.end ?? 0);
  const read = async (from: number): Promise<LeafPage | null> => {
    if (from >= end) return null;
    const { rows } = await db.query<{ indexes: string | null; positions: string | null; hashes: Uint8Array | null; unhashed: string | null; missized: string | null }>(
      `SELECT string_agg(leaf_index::text, ',') AS indexes, string_agg(coalesce(position::text, '0'), ',') AS positions,
              string_agg(CASE WHEN octet_length(hash) = 32 THEN hash ELSE decode(repeat('00', 32), 'hex') END, ''::bytea) AS hashes,
              string_agg(CASE WHEN hash IS NULL THEN leaf_index::text END, ',') AS unhashed,
              string_agg(CASE WHEN octet_length(hash) <> 32 THEN leaf_index::text END, ',') AS missized
         FROM (SELECT l.leaf_index, l.position, n.hash FROM log_leaves l
                 LEFT JOIN log_nodes n ON n.level = 0 AND n.idx = l.leaf_index AND n.idx >= $1 AND n.idx < $1::bigint + $2
                WHERE l.leaf_index >= $1 AND l.leaf_index < $1::bigint + $2 ORDER BY l.leaf_index) leaves`,
      [from, size],
    );
    const row = rows[0];
    if (!row || row.indexes === null) return { indexes: new Float64Array(0), positions: new Float64Array(0), hashes: ZERO.subarray(0, 0), unhashed: new Set(), missized: new Set() };
    const h = row.hashes ?? new Uint8Array(0);
    const page: LeafPage = {
      indexes: Float64Array.from(row.indexes.split(','), Number),
      positions: Float64Array.from((row.positions ?? '').split(','), Number),
      hashes: Buffer.isBuffer(h) ? h : Buffer.from(h.buffer, h.byteOffset, h.byteLength), // node-pg's already is one; PGlite's is not
      unhashed: indexSet(row.unhashed),
      missized: indexSet(row.missized),
    };
    const n = page.indexes.length;
    if (page.positions.length !== n || page.hashes.length !== n * HASH_BYTES) throw new Error(`the leaves from ${from}: ${n} indexes but ${page.positions.length} positions and ${page.hashes.length / HASH_BYTES} hashes`);
    for (let i = 1; i < n; i++) if (!(page.indexes[i]! > page.indexes[i - 1]!)) throw new Error(`the leaves from ${from} came out of index order`);
    return page;
  };
  let from = 0;
  let coming: Promise<LeafPage | null> | null = null;
  return async () => {
    const page = await (coming ?? read(from));
    from += size;
    coming = read(from);
    coming.catch(() => undefined); // a page read ahead and never wanted: the walk stopped at a broken tree
    return page;
  };
}

/** A page of events as columns, with their leaf hashes, 32 bytes each in order. */
interface HashedPage {
  readonly columns: LeafColumns;
  readonly hashes: Buffer;
}

/**
 * The events in position order with their leaf hashes, a page at a time. Pages are read one after another and
 * hashed by `hasher` (threads, or this one) up to `depth` pages ahead of the walk, so reading, hashing and walking
 * overlap.
 */
function eventPages(db: Queryable, redactions: ReadonlyMap<number, Redaction>, page: number, hasher: (columns: LeafColumns) => Promise<Buffer>, depth: number): () => Promise<HashedPage | null> {
  const pages: { columns: LeafColumns; hashes: Promise<Buffer> }[] = [];
  let reading: Promise<LeafColumns> | null = eventColumnsAfter(db, 0, page, redactions);
  reading.catch(() => undefined); // awaited below; a walk that stops first leaves it unwanted
  return async () => {
    while (reading && pages.length < depth) {
      const columns: LeafColumns = await reading;
      const n = columns.positions.length;
      reading = n < page ? null : eventColumnsAfter(db, columns.positions[n - 1]!, page, redactions);
      reading?.catch(() => undefined);
      const hashes = hasher(columns);
      hashes.catch(() => undefined); // awaited in its turn below; a page abandoned with the walk is not an unhandled rejection
      pages.push({ columns, hashes });
    }
    const next = pages.shift();
    return next ? { columns: next.columns, hashes: await next.hashes } : null;
  };
}

const hashOf = (event: LeafEvent) => leafHash(leafOf(event));

/**
 * Two edited events that are each other's sealed leaf once their data, or their positions, are exchanged back:
 * a swapped pair (an UPDATE that swapped two payloads, or two rows' positions), named as such.
 */
function swappedPairs(mismatches: readonly { event: LeafEvent; stored: Buffer }[]): [number, number][] {
  const pairs: [number, number][] = [];
  const paired = new Set<number>();
  for (const [i, a] of mismatches.entries()) {
    for (const b of mismatches.slice(i + 1)) {
      if (paired.has(a.event.position) || paired.has(b.event.position)) continue;
      const dataSwapped = hashOf({ ...a.event, data: b.event.data }).equals(a.stored) && hashOf({ ...b.event, data: a.event.data }).equals(b.stored);
      const rowsSwapped = hashOf({ ...a.event, position: b.event.position }).equals(b.stored) && hashOf({ ...b.event, position: a.event.position }).equals(a.stored);
      if (dataSwapped || rowsSwapped) {
        pairs.push([a.event.position, b.event.position]);
        paired.add(a.event.position).add(b.event.position);
      }
    }
  }
  return pairs;
}

export interface ChainOptions {
  /** Events (and leaves) a read. */
  readonly page?: number;
  /**
   * Threads hashing leaves (0: this thread alone), whatever the log's size. By default the cores but one, from
   * one up to four, for a log of more than a page (bench/results.md).
   */
  readonly threads?: number;
}

/** Verifies the log in the database against its signed checkpoints, with `key` (the auditor's) or the seal's own. */
export async function verifyChain(db: Queryable, key: KeyObject | null, trustedKeyOf: (pem: string) => KeyObject, options: ChainOptions = {}): Promise<ChainReport> {
  const page = options.page ?? PAGE;
  const threads = options.threads ?? defaultLeafThreads();
  let pool: LeafPool | null = null;
  try {
    return await walk(db, key, trustedKeyOf, page, (columns) => {
      // By default threads only for a log of more than a page: starting them costs more than a small log's hashing.
      if (threads > 0 && (options.threads !== undefined || columns.positions.length === page)) pool ??= new LeafPool(threads);
      return pool ? pool.hash(columns) : Promise.resolve(columnLeafHashes(columns));
    }, threads + 1);
  } finally {
    await (pool as LeafPool | null)?.close();
  }
}

async function walk(db: Queryable, key: KeyObject | null, trustedKeyOf: (pem: string) => KeyObject, page: number, hasher: (columns: LeafColumns) => Promise<Buffer>, depth: number): Promise<ChainReport> {
  const state = await sealState(db);
  if (!state) throw new Error('the log is not sealed: nothing to verify (start a server with a signing key)');
  const publicKey = key ?? trustedKeyOf(state.publicKey);
  const { rows: notes } = await db.query<{ tree_size: string; root: Uint8Array; note: string }>('SELECT tree_size, root, note FROM log_checkpoints ORDER BY tree_size');
  const checkpoints = notes.map((n) => ({ size: Number(n.tree_size), root: Buffer.from(n.root), note: n.note }));
  const findings: ChainFinding[] = [];
  let more = 0;
  const found = (f: ChainFinding) => (findings.length < MAX_FINDINGS ? findings.push(f) : more++);

  for (const c of checkpoints) {
    try {
      const opened = openNote(c.note, state.origin, publicKey);
      if (opened.checkpoint.size !== c.size || !opened.checkpoint.root.equals(c.root)) found({ kind: 'bad_checkpoint', tree_size: c.size, reason: 'the signed note says another size or root than the row it is stored with' });
    } catch (error) {
      found({ kind: 'bad_checkpoint', tree_size: c.size, reason: error instanceof Error ? error.message : String(error) });
    }
  }

  // The tree from the events and the tree from the stored leaves are one until a leaf differs: hashed once till then.
  const fromEvents = new Frontier(0, []);
  let fromStore = fromEvents;
  let next = 0;
  const redactions = await allRedactions(db);
  const events = new Pages<HashedPage>((p) => p.columns.positions.length, eventPages(db, redactions, page, hasher, depth));
  let haveEvent = await events.turn();
  const leaves = new Pages<LeafPage>((p) => p.indexes.length, await leafPages(db, page));
  let eventCount = 0;
  let lastPosition = 0;
  /** The events whose leaves did not match, to tell a swapped pair from two edits at the end. */
  const mismatches: { event: LeafEvent; stored: Buffer }[] = [];
  const checkRoots = () => {
    while (next < checkpoints.length && checkpoints[next]!.size === fromStore.size) {
      const c = checkpoints[next++]!;
      if (!fromStore.root().equals(c.root)) found({ kind: 'root_mismatch', tree_size: c.size, of: 'stored_tree' });
      if (!fromEvents.root().equals(c.root)) found({ kind: 'root_mismatch', tree_size: c.size, of: 'events' });
    }
  };
  while (leaves.step() || (await leaves.turn())) {
    const l = leaves.page!;
    const li = leaves.i;
    const index = l.indexes[li]!;
    const position = l.positions[li]!;
    if (index !== fromStore.size) {
      found({ kind: 'tree_broken', detail: `leaf ${fromStore.size} is missing from log_leaves (the next is ${index})` });
      break;
    }
    if (position <= lastPosition) found({ kind: 'tree_broken', detail: `leaf ${index} is position ${position}, not after the leaf before it (${lastPosition})` });
    lastPosition = position;
    // Events below this leaf's position that no leaf is: written after their place was sealed.
    while (haveEvent && events.page!.columns.positions[events.i]! < position) {
      const c = events.page!.columns;
      found({ kind: 'inserted', position: c.positions[events.i]!, stream: c.streams[events.i]!, type: c.types[events.i]! });
      eventCount++;
      haveEvent = events.step() || (await events.turn());
    }
    const stored = l.hashes.subarray(li * HASH_BYTES, (li + 1) * HASH_BYTES);
    if (l.unhashed.has(index)) found({ kind: 'tree_broken', detail: `leaf ${index} has no hash in log_nodes` });
    if (l.missized.has(index)) found({ kind: 'tree_broken', detail: `leaf ${index}'s hash in log_nodes is not ${HASH_BYTES} bytes` });
    let recomputed: Buffer = ZERO;
    if (!haveEvent || events.page!.columns.positions[events.i]! !== position) {
      found({ kind: 'deleted', position, leaf_index: index });
    } else {
      const { columns: c, hashes } = events.page!;
      const ei = events.i;
      eventCount++;
      let redaction = c.redactedSha[ei] === null ? undefined : redactions.get(position);
      recomputed = hashes.subarray(ei * HASH_BYTES, (ei + 1) * HASH_BYTES);
      if (!recomputed.equals(stored) && !redaction) {
        // Redacted while this walk ran (after it read the redactions): the event as it stands now says so.
        const now = await sealedEvent(db, position);
        if (now?.event.redaction && leafHash(leafOf(now.event)).equals(stored)) [redaction, recomputed] = [now.event.redaction, stored];
      }
      if (redaction) found({ kind: 'redacted', position, by: redaction.actor, reason: redaction.reason, redaction_position: redaction.position });
      if (!recomputed.equals(stored)) {
        if (mismatches.length < MAX_FINDINGS) mismatches.push({ event: columnEvent(c, ei, redaction), stored });
        found({ kind: 'edited', position, leaf_index: index, stream: c.streams[ei]!, type: c.types[ei]! });
      }
      haveEvent = events.step() || (await events.turn());
    }
    if (fromStore === fromEvents && !recomputed.equals(stored)) fromStore = fromEvents.clone();
    fromEvents.push(recomputed);
    if (fromStore !== fromEvents) fromStore.push(stored);
    checkRoots();
  }
  let unsealed = 0;
  while (haveEvent) {
    unsealed++;
    eventCount++;
    haveEvent = events.step() || (await events.turn());
  }
  if (fromStore.size !== state.size) found({ kind: 'tree_broken', detail: `the seal says ${state.size} leaves; log_leaves holds ${fromStore.size}` });
  for (const c of checkpoints.slice(next)) found({ kind: 'bad_checkpoint', tree_size: c.size, reason: `a checkpoint of ${c.size} leaves, past the ${fromStore.size} the tree holds` });
  const pairs = swappedPairs(mismatches);
  const swappedAt = new Set(pairs.flat());
  const kept = [...findings.filter((f) => !(f.kind === 'edited' && swappedAt.has(f.position))), ...pairs.map((positions) => ({ kind: 'swapped' as const, positions }))];
  return { events: eventCount, leaves: fromStore.size, unsealed, checkpoints: checkpoints.length, origin: state.origin, findings: kept, more };
}
