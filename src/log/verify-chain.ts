// `nomos verify`'s check of the log itself: every event's leaf recomputed and walked against the leaves the
// sealer stored, the roots at every checkpoint recomputed from the events and from the stored tree and compared
// with the signed roots, every signature checked. It names what it finds: the first edited event, a deleted one,
// one inserted after sealing, a swapped pair, a checkpoint that does not verify, a stored tree someone rewrote.
import type { KeyObject } from 'node:crypto';
import type { Queryable } from '../ports/db.ts';
import { type LeafEvent, type RawLeafEvent, leafOf, parsedEvent, rawLeafHashes } from './leaf.ts';
import { LeafPool, defaultLeafThreads } from './leaf-pool.ts';
import { Frontier, HASH_BYTES, leafHash } from './merkle.ts';
import { openNote } from './note.ts';
import { allRedactions, rawEventsAfter, sealState, sealedEvent } from './store.ts';

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
const ZERO: Buffer = Buffer.alloc(32);

interface StoredLeaf {
  readonly index: number;
  readonly position: number;
  readonly hash: Buffer | null;
}

/**
 * The stored leaves in index order, with their level-0 hashes, read by index range up to the highest index the
 * table holds (a missing leaf is a finding, not the end), each range bounded on both tables so that no page sorts
 * the nodes past it.
 */
async function* storedLeaves(db: Queryable, size: number): AsyncGenerator<StoredLeaf> {
  const { rows } = await db.query<{ end: string | null }>('SELECT max(leaf_index) + 1 AS end FROM log_leaves');
  const end = Number(rows[0]?.end ?? 0);
  const page = async (from: number): Promise<StoredLeaf[]> => {
    if (from >= end) return [];
    const { rows } = await db.query<{ leaf_index: string; position: string; hash: Uint8Array | null }>(
      `SELECT l.leaf_index, l.position, n.hash FROM log_leaves l
         LEFT JOIN log_nodes n ON n.level = 0 AND n.idx = l.leaf_index AND n.idx >= $1 AND n.idx < $1::bigint + $2
        WHERE l.leaf_index >= $1 AND l.leaf_index < $1::bigint + $2 ORDER BY l.leaf_index`,
      [from, size],
    );
    const asBuffer = (h: Uint8Array) => (Buffer.isBuffer(h) ? h : Buffer.from(h.buffer, h.byteOffset, h.byteLength)); // node-pg's already is one; PGlite's is not
    return rows.map((r): StoredLeaf => ({ index: Number(r.leaf_index), position: Number(r.position), hash: r.hash === null ? null : asBuffer(r.hash) }));
  };
  let coming = page(0);
  try {
    for (let from = 0; from < end; from += size) {
      const leaves = await coming;
      coming = page(from + size);
      yield* leaves;
    }
  } finally {
    coming.catch(() => undefined); // a page read ahead and never wanted: the walk stopped at a broken tree
  }
}

interface Hashed {
  readonly event: RawLeafEvent;
  readonly hash: Buffer;
}

/**
 * Every event with its leaf hash, in position order. Pages are read one after another and hashed by `hasher`
 * (threads, or this one) up to `depth` pages ahead of the walk, so reading, hashing and walking overlap.
 */
async function* hashedEvents(db: Queryable, page: number, hasher: (events: RawLeafEvent[]) => Promise<Buffer>, depth: number): AsyncGenerator<Hashed> {
  const redactions = await allRedactions(db);
  const pages: { events: RawLeafEvent[]; hashes: Promise<Buffer> }[] = [];
  let reading: Promise<RawLeafEvent[]> | null = rawEventsAfter(db, 0, page, redactions);
  try {
    for (;;) {
      while (reading && pages.length < depth) {
        const events: RawLeafEvent[] = await reading;
        reading = events.length < page ? null : rawEventsAfter(db, events.at(-1)!.position, page, redactions);
        const hashes = hasher(events);
        hashes.catch(() => undefined); // awaited in its turn below; a page abandoned with the walk is not an unhandled rejection
        pages.push({ events, hashes });
      }
      const next = pages.shift();
      if (!next) return;
      const hashes = await next.hashes;
      for (const [i, event] of next.events.entries()) yield { event, hash: hashes.subarray(i * HASH_BYTES, (i + 1) * HASH_BYTES) };
    }
  } finally {
    reading?.catch(() => undefined);
  }
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
   * Threads hashing leaves (0: this thread alone), whatever the log's size. By default the cores but one, up to
   * four, on a machine of more than two, for a log of more than a page; none on two cores, where the database
   * and this thread already take both (bench/results.md).
   */
  readonly threads?: number;
}

/** Verifies the log in the database against its signed checkpoints, with `key` (the auditor's) or the seal's own. */
export async function verifyChain(db: Queryable, key: KeyObject | null, trustedKeyOf: (pem: string) => KeyObject, options: ChainOptions = {}): Promise<ChainReport> {
  const page = options.page ?? PAGE;
  const threads = options.threads ?? defaultLeafThreads();
  let pool: LeafPool | null = null;
  try {
    return await walk(db, key, trustedKeyOf, page, (events) => {
      // By default threads only for a log of more than a page: starting them costs more than a small log's hashing.
      if (threads > 0 && (options.threads !== undefined || events.length === page)) pool ??= new LeafPool(threads);
      return pool ? pool.hash(events) : Promise.resolve(rawLeafHashes(events));
    }, threads + 1);
  } finally {
    await (pool as LeafPool | null)?.close();
  }
}

async function walk(db: Queryable, key: KeyObject | null, trustedKeyOf: (pem: string) => KeyObject, page: number, hasher: (events: RawLeafEvent[]) => Promise<Buffer>, depth: number): Promise<ChainReport> {
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
  const events = hashedEvents(db, page, hasher, depth);
  let pending = await events.next();
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
  for await (const leaf of storedLeaves(db, page)) {
    if (leaf.index !== fromStore.size) {
      found({ kind: 'tree_broken', detail: `leaf ${fromStore.size} is missing from log_leaves (the next is ${leaf.index})` });
      break;
    }
    if (leaf.position <= lastPosition) found({ kind: 'tree_broken', detail: `leaf ${leaf.index} is position ${leaf.position}, not after the leaf before it (${lastPosition})` });
    lastPosition = leaf.position;
    // Events below this leaf's position that no leaf is: written after their place was sealed.
    while (!pending.done && pending.value.event.position < leaf.position) {
      const { event } = pending.value;
      found({ kind: 'inserted', position: event.position, stream: event.stream, type: event.type });
      eventCount++;
      pending = await events.next();
    }
    const stored = leaf.hash ?? ZERO;
    if (leaf.hash === null) found({ kind: 'tree_broken', detail: `leaf ${leaf.index} has no hash in log_nodes` });
    let recomputed: Buffer = ZERO;
    if (pending.done || pending.value.event.position !== leaf.position) {
      found({ kind: 'deleted', position: leaf.position, leaf_index: leaf.index });
    } else {
      const { event, hash } = pending.value;
      eventCount++;
      pending = await events.next();
      let redaction = event.redaction;
      recomputed = hash;
      if (!recomputed.equals(stored) && !redaction) {
        // Redacted while this walk ran (after it read the redactions): the event as it stands now says so.
        const now = await sealedEvent(db, event.position);
        if (now?.event.redaction && leafHash(leafOf(now.event)).equals(stored)) [redaction, recomputed] = [now.event.redaction, stored];
      }
      if (redaction) found({ kind: 'redacted', position: event.position, by: redaction.actor, reason: redaction.reason, redaction_position: redaction.position });
      if (!recomputed.equals(stored)) {
        if (mismatches.length < MAX_FINDINGS) mismatches.push({ event: parsedEvent(event), stored });
        found({ kind: 'edited', position: leaf.position, leaf_index: leaf.index, stream: event.stream, type: event.type });
      }
    }
    if (fromStore === fromEvents && !recomputed.equals(stored)) fromStore = fromEvents.clone();
    fromEvents.append(recomputed);
    if (fromStore !== fromEvents) fromStore.append(stored);
    checkRoots();
  }
  let unsealed = 0;
  while (!pending.done) {
    unsealed++;
    eventCount++;
    pending = await events.next();
  }
  if (fromStore.size !== state.size) found({ kind: 'tree_broken', detail: `the seal says ${state.size} leaves; log_leaves holds ${fromStore.size}` });
  for (const c of checkpoints.slice(next)) found({ kind: 'bad_checkpoint', tree_size: c.size, reason: `a checkpoint of ${c.size} leaves, past the ${fromStore.size} the tree holds` });
  const pairs = swappedPairs(mismatches);
  const swappedAt = new Set(pairs.flat());
  const kept = [...findings.filter((f) => !(f.kind === 'edited' && swappedAt.has(f.position))), ...pairs.map((positions) => ({ kind: 'swapped' as const, positions }))];
  return { events: eventCount, leaves: fromStore.size, unsealed, checkpoints: checkpoints.length, origin: state.origin, findings: kept, more };
}
