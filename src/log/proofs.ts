// Inclusion and consistency proofs over the sealed tree, in RFC 9162's form, read from the stored complete nodes.
import type { Queryable } from '../ports/db.ts';
import { leafOf } from './leaf.ts';
import { consistencyNodes, consistencyProof, inclusionNodes, inclusionProof } from './merkle.ts';
import { readNodes, sealedEvent, sealState } from './store.ts';

/** A proof asked of a tree or position the log does not have (the API answers 400 or 404 with `code`). */
export class ProofRefused extends Error {
  constructor(
    readonly status: 400 | 404,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface InclusionAnswer {
  readonly position: number;
  readonly leaf_index: number;
  readonly tree_size: number;
  /** Base64 of the exact leaf bytes hashed. */
  readonly leaf: string;
  readonly hashes: string[];
}

async function sealedSize(db: Queryable): Promise<number> {
  return (await sealState(db))?.size ?? 0;
}

function treeWithin(treeSize: number, sealed: number, what: string): void {
  if (treeSize < 1) throw new ProofRefused(400, 'invalid_tree_size', `${what} must be at least 1: an empty tree has no proofs`);
  if (treeSize > sealed) throw new ProofRefused(400, 'tree_size_past_log', `${what} ${treeSize} is past the sealed tree (size ${sealed})`);
}

export async function inclusionOf(db: Queryable, position: number, treeSize: number): Promise<InclusionAnswer> {
  treeWithin(treeSize, await sealedSize(db), 'tree_size');
  const sealed = await sealedEvent(db, position);
  if (!sealed) throw new ProofRefused(404, 'position_not_sealed', `no sealed event at position ${position}: none was committed there, or it is not sealed yet`);
  if (sealed.leafIndex >= treeSize) {
    throw new ProofRefused(400, 'position_past_tree', `position ${position} is leaf ${sealed.leafIndex}, outside a tree of size ${treeSize}`);
  }
  const node = await readNodes(db, inclusionNodes(sealed.leafIndex, treeSize));
  return {
    position,
    leaf_index: sealed.leafIndex,
    tree_size: treeSize,
    leaf: leafOf(sealed.event).toString('base64'),
    hashes: inclusionProof(sealed.leafIndex, treeSize, node).map((h) => h.toString('base64')),
  };
}

export async function consistencyOf(db: Queryable, from: number, to: number): Promise<{ from: number; to: number; hashes: string[] }> {
  const sealed = await sealedSize(db);
  treeWithin(from, sealed, 'from');
  treeWithin(to, sealed, 'to');
  if (from > to) throw new ProofRefused(400, 'invalid_range', `from (${from}) must not be past to (${to})`);
  const node = await readNodes(db, consistencyNodes(from, to));
  return { from, to, hashes: consistencyProof(from, to, node).map((h) => h.toString('base64')) };
}
