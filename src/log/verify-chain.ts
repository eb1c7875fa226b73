// `nomos verify`'s check of the log itself: every event's leaf recomputed and walked against the leaves the
// sealer stored, the roots at every checkpoint recomputed from the events and from the stored tree and compared
// with the signed roots, every signature checked. It names what it finds: the first edited event, a deleted one,
// one inserted after sealing, a swapped pair, a checkpoint that does not verify, a stored tree someone rewrote.
import type { KeyObject } from 'node:crypto';
import type { Queryable } from '../ports/db.ts';
import { type LeafEvent, leafOf } from './leaf.ts';
import { Frontier, leafHash } from './merkle.ts';
import { openNote } from './note.ts';
import { eventsBetween, sealState } from './store.ts';

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

const PAGE = 5_000;
const MAX_FINDINGS = 100;
const ZERO: Buffer = Buffer.alloc(32);

interface StoredLeaf {
  readonly index: number;
  readonly position: number;
  readonly hash: Buffer | null;
}

/** Pages read one ahead: the next page is on its way while this one is hashed. */
async function* ahead<T>(page: (after: number) => Promise<T[]>, next: (last: T) => number, start: number): AsyncGenerator<T> {
  let coming = page(start);
  for (;;) {
    const rows = await coming;
    if (rows.length === PAGE) coming = page(next(rows.at(-1)!));
    yield* rows;
    if (rows.length < PAGE) return;
  }
}

function storedLeaves(db: Queryable): AsyncGenerator<StoredLeaf> {
  const page = async (from: number) => {
    const { rows } = await db.query<{ leaf_index: string; position: string; hash: Uint8Array | null }>(
      `SELECT l.leaf_index, l.position, n.hash FROM log_leaves l LEFT JOIN log_nodes n ON n.level = 0 AND n.idx = l.leaf_index
       WHERE l.leaf_index >= $1 ORDER BY l.leaf_index LIMIT $2`,
      [from, PAGE],
    );
    return rows.map((r): StoredLeaf => ({ index: Number(r.leaf_index), position: Number(r.position), hash: r.hash === null ? null : Buffer.from(r.hash) }));
  };
  return ahead(page, (last) => last.index + 1, 0);
}

function allEvents(db: Queryable): AsyncGenerator<LeafEvent> {
  return ahead((after) => eventsBetween(db, after, Number.MAX_SAFE_INTEGER, PAGE), (last) => last.position, 0);
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

/** Verifies the log in the database against its signed checkpoints, with `key` (the auditor's) or the seal's own. */
export async function verifyChain(db: Queryable, key: KeyObject | null, trustedKeyOf: (pem: string) => KeyObject): Promise<ChainReport> {
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

  const fromEvents = new Frontier(0, []);
  const fromStore = new Frontier(0, []);
  let next = 0;
  const events = allEvents(db);
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
  for await (const leaf of storedLeaves(db)) {
    if (leaf.index !== fromStore.size) {
      found({ kind: 'tree_broken', detail: `leaf ${fromStore.size} is missing from log_leaves (the next is ${leaf.index})` });
      break;
    }
    if (leaf.position <= lastPosition) found({ kind: 'tree_broken', detail: `leaf ${leaf.index} is position ${leaf.position}, not after the leaf before it (${lastPosition})` });
    lastPosition = leaf.position;
    // Events below this leaf's position that no leaf is: written after their place was sealed.
    while (!pending.done && pending.value.position < leaf.position) {
      found({ kind: 'inserted', position: pending.value.position, stream: pending.value.stream, type: pending.value.type });
      eventCount++;
      pending = await events.next();
    }
    const stored = leaf.hash ?? ZERO;
    if (leaf.hash === null) found({ kind: 'tree_broken', detail: `leaf ${leaf.index} has no hash in log_nodes` });
    let recomputed: Buffer = ZERO;
    if (pending.done || pending.value.position !== leaf.position) {
      found({ kind: 'deleted', position: leaf.position, leaf_index: leaf.index });
    } else {
      const event = pending.value;
      recomputed = leafHash(leafOf(event));
      if (event.redaction) found({ kind: 'redacted', position: event.position, by: event.redaction.actor, reason: event.redaction.reason, redaction_position: event.redaction.position });
      eventCount++;
      pending = await events.next();
      if (!recomputed.equals(stored)) {
        if (mismatches.length < MAX_FINDINGS) mismatches.push({ event, stored });
        found({ kind: 'edited', position: leaf.position, leaf_index: leaf.index, stream: event.stream, type: event.type });
      }
    }
    fromEvents.append(recomputed);
    fromStore.append(stored);
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
