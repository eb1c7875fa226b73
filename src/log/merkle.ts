// RFC 9162 §2.1 Merkle tree for a log whose complete nodes are stored: each computation first names the nodes it
// needs (so the caller can fetch them in one query), then computes roots, inclusion paths and consistency proofs.
import { hash } from 'node:crypto';

export type Hash = Buffer;
export interface NodeId { readonly level: number; readonly index: number }
export interface StoredNode extends NodeId { readonly hash: Hash }
export type NodeSource = (level: number, index: number) => Hash;

/** A run of leaves [start, start + size) where start is a multiple of the largest power of two <= size. */
interface Span { readonly start: number; readonly size: number }

export const HASH_BYTES = 32;
const MAX_LEVEL = 52; // 2^53 leaves would exceed Number.MAX_SAFE_INTEGER

/**
 * One-shot SHA-256 (crypto.hash: no Hash object for the garbage collector to finalize, three of them an event).
 * The digest comes out as a 'binary' (latin1) string, a byte a character, copied into a Buffer here: Node 20
 * makes a 'buffer' digest twice as slowly as this (bench/profile-notes.md).
 */
function sha256(bytes: Uint8Array): Hash {
  return Buffer.from(hash('sha256', bytes, 'binary'), 'latin1');
}

function isHash(value: unknown): value is Hash {
  return value instanceof Uint8Array && value.byteLength === HASH_BYTES;
}

function requireHash(value: unknown, what: string): Hash {
  if (!isHash(value)) throw new TypeError(`${what} is not a ${HASH_BYTES}-byte hash`);
  return value;
}

function requireCount(value: number, what: string, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`${what} must be an integer in [${min}, ${max}], got ${value}`);
  }
  return value;
}

/** Scratch space for a prefixed hash input: crypto.hash reads it before returning, so one buffer serves every call. */
let scratch = Buffer.allocUnsafe(4096);
const room = (bytes: number): Buffer => (scratch.length >= bytes ? scratch : (scratch = Buffer.allocUnsafe(Math.max(bytes, 2 * scratch.length))));

export function leafHash(leaf: Uint8Array): Hash {
  const prefixed = room(1 + leaf.byteLength);
  prefixed[0] = 0x00;
  prefixed.set(leaf, 1);
  return sha256(prefixed.subarray(0, 1 + leaf.byteLength));
}

/** The leaf hash of a leaf given as its text (UTF-8), written into `out` at `offset`. */
export function leafHashOfTextInto(leaf: string, out: Buffer, offset: number): void {
  // The prefix byte 0x00 as the character U+0000, which UTF-8 writes as that byte: the text is hashed as it is.
  out.write(hash('sha256', `\0${leaf}`, 'binary'), offset, HASH_BYTES, 'latin1');
}

export function nodeHash(left: Hash, right: Hash): Hash {
  const both = room(1 + 2 * HASH_BYTES);
  both[0] = 0x01;
  both.set(requireHash(left, 'left child'), 1);
  both.set(requireHash(right, 'right child'), 1 + HASH_BYTES);
  return sha256(both.subarray(0, 1 + 2 * HASH_BYTES));
}

export const EMPTY_ROOT: Hash = sha256(Buffer.alloc(0));

/** Largest power of two strictly below n (n >= 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  let p = 1;
  while (p < n) p *= 2;
  return p === n;
}

const odd = (x: number): boolean => x % 2 === 1;
// Division, not `>>`, because indices go past 2^31.
const half = (x: number): number => Math.floor(x / 2);

/** MTH over leaf hashes held in memory (tests, small trees, the verifier). */
export function rootOfLeaves(leafHashes: readonly Hash[]): Hash {
  if (leafHashes.length === 0) return EMPTY_ROOT;
  // Pairing left to right and carrying an odd last node up unchanged builds the same tree as the RFC's split at k.
  let level = leafHashes.map((h, i) => requireHash(h, `leaf hash ${i}`));
  while (level.length > 1) {
    const next: Hash[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(nodeHash(level[i]!, level[i + 1]!));
    if (odd(level.length)) next.push(level[level.length - 1]!);
    level = next;
  }
  return level[0]!;
}

/** The binary decomposition of a span into complete nodes, largest (leftmost) first. */
function spanNodes({ start, size }: Span): NodeId[] {
  const ids: NodeId[] = [];
  let at = start;
  for (let level = MAX_LEVEL; level >= 0; level--) {
    const width = 2 ** level;
    if (odd(Math.floor(size / width))) {
      ids.push({ level, index: at / width });
      at += width;
    }
  }
  return ids;
}

function missingNode(level: number, index: number): Error {
  return new Error(`merkle node (level ${level}, index ${index}) was not supplied`);
}

function fetchNode(node: NodeSource, { level, index }: NodeId): Hash {
  const hash: unknown = node(level, index);
  if (!isHash(hash)) throw missingNode(level, index);
  return hash;
}

/** The MTH of a span from its complete nodes: folded right to left, as the RFC's recursion on the right part does. */
function foldRight(hashes: readonly Hash[]): Hash {
  let acc = hashes.at(-1);
  if (acc === undefined) return EMPTY_ROOT;
  for (let i = hashes.length - 2; i >= 0; i--) acc = nodeHash(hashes[i]!, acc);
  return acc;
}

function spanHash(span: Span, node: NodeSource): Hash {
  return foldRight(spanNodes(span).map((id) => fetchNode(node, id)));
}

/** The spans whose MTHs form PATH(m, D[n]), leaf side first. */
function inclusionSpans(m: number, n: number): Span[] {
  const spans: Span[] = [];
  let start = 0;
  let size = n;
  while (size > 1) {
    const k = splitPoint(size);
    if (m < start + k) {
      spans.push({ start: start + k, size: size - k });
      size = k;
    } else {
      spans.push({ start, size: k });
      start += k;
      size -= k;
    }
  }
  return spans.reverse();
}

/** The spans whose MTHs form PROOF(m, D[n]) = SUBPROOF(m, D[n], true), in the RFC's order. */
function consistencySpans(m: number, n: number): Span[] {
  const spans: Span[] = [];
  let start = 0;
  let size = n;
  let left = m; // m relative to start
  let whole = true; // SUBPROOF's b: still on the left edge, where the old root is known to the verifier
  while (left !== size) {
    const k = splitPoint(size);
    if (left <= k) {
      spans.push({ start: start + k, size: size - k });
      size = k;
    } else {
      spans.push({ start, size: k });
      start += k;
      size -= k;
      left -= k;
      whole = false;
    }
  }
  if (!whole) spans.push({ start, size });
  return spans.reverse();
}

function checkInclusionArgs(m: number, n: number): void {
  requireCount(n, 'tree size', 1, Number.MAX_SAFE_INTEGER);
  requireCount(m, 'leaf index', 0, n - 1);
}

function checkConsistencyArgs(m: number, n: number): void {
  requireCount(n, 'new tree size', 1, Number.MAX_SAFE_INTEGER);
  requireCount(m, 'old tree size', 1, n);
}

/** The complete nodes whose hashes rootAt(n) needs (its binary decomposition, highest level first). */
export function rootNodes(n: number): NodeId[] {
  return spanNodes({ start: 0, size: requireCount(n, 'tree size', 0, Number.MAX_SAFE_INTEGER) });
}

export function rootAt(n: number, node: NodeSource): Hash {
  requireCount(n, 'tree size', 0, Number.MAX_SAFE_INTEGER);
  return spanHash({ start: 0, size: n }, node);
}

/** The complete nodes inclusionProof(m, n) needs; m is a 0-based leaf index < n. */
export function inclusionNodes(m: number, n: number): NodeId[] {
  checkInclusionArgs(m, n);
  return inclusionSpans(m, n).flatMap(spanNodes);
}

/** RFC 9162 order: the sibling of the leaf first, the sibling of the root's child last. */
export function inclusionProof(m: number, n: number, node: NodeSource): Hash[] {
  checkInclusionArgs(m, n);
  return inclusionSpans(m, n).map((span) => spanHash(span, node));
}

export function consistencyNodes(m: number, n: number): NodeId[] {
  checkConsistencyArgs(m, n);
  return consistencySpans(m, n).flatMap(spanNodes);
}

export function consistencyProof(m: number, n: number, node: NodeSource): Hash[] {
  checkConsistencyArgs(m, n);
  return consistencySpans(m, n).map((span) => spanHash(span, node));
}

/** A NodeSource over nodes fetched from storage; asking for one that was not fetched throws, naming it. */
export function nodeSource(nodes: Iterable<StoredNode>): NodeSource {
  const byId = new Map<string, Hash>();
  for (const { level, index, hash } of nodes) byId.set(`${level}/${index}`, hash);
  return (level, index) => {
    const hash = byId.get(`${level}/${index}`);
    if (hash === undefined) throw missingNode(level, index);
    return hash;
  };
}

/**
 * The walk shared by RFC 9162 §2.1.3.2 and §2.1.4.2: `sr` climbs to the root of the tree of size sn + 1, `fr` to
 * the root of the tree whose last leaf is fn, using only the path entries that lie left of it.
 */
function walk(fn: number, sn: number, seed: Hash, path: readonly Hash[]): { fr: Hash; sr: Hash } | undefined {
  let fr = seed;
  let sr = seed;
  for (const c of path) {
    if (sn === 0) return undefined;
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn !== 0 && !odd(fn)) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 ? { fr, sr } : undefined;
}

const isSize = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;
const sameHash = (a: Hash, b: Hash): boolean => Buffer.compare(a, b) === 0;
const isPath = (proof: unknown): proof is readonly Hash[] => Array.isArray(proof) && proof.every(isHash);

/** RFC 9162 §2.1.3.2 verification; false (never throws) on any mismatch or malformed input. */
export function verifyInclusion(leafIndex: number, treeSize: number, leafHash: Hash, proof: readonly Hash[], root: Hash): boolean {
  if (!isSize(leafIndex) || !isSize(treeSize) || leafIndex >= treeSize) return false;
  if (!isHash(leafHash) || !isHash(root) || !isPath(proof)) return false;
  const reached = walk(leafIndex, treeSize - 1, leafHash, proof);
  return reached !== undefined && sameHash(reached.sr, root);
}

/** RFC 9162 §2.1.4.2 verification; false on mismatch/malformed; m === n requires an empty proof and equal roots. */
export function verifyConsistency(m: number, n: number, rootM: Hash, rootN: Hash, proof: readonly Hash[]): boolean {
  // m = 0 is outside what consistencyProof produces, so it is treated as malformed rather than trivially consistent.
  if (!isSize(m) || !isSize(n) || m < 1 || m > n) return false;
  if (!isHash(rootM) || !isHash(rootN) || !isPath(proof)) return false;
  if (m === n) return proof.length === 0 && sameHash(rootM, rootN);
  if (proof.length === 0) return false;
  // When m is a power of two the old tree is a complete node the proof omits; the verifier holds it as rootM.
  const [seed, ...rest] = isPowerOfTwo(m) ? [rootM, ...proof] : proof;
  if (seed === undefined) return false;
  let fn = m - 1;
  let sn = n - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  const reached = walk(fn, sn, seed, rest);
  return reached !== undefined && sameHash(reached.fr, rootM) && sameHash(reached.sr, rootN);
}

/** The right edge of a growing tree: appends leaf hashes, yielding each complete node that the append completes. */
export class Frontier {
  /** Highest level first, like rootNodes; each level appears at most once. */
  readonly #edge: StoredNode[];
  #size: number;

  /** The complete nodes on the right edge of a tree of size n (= rootNodes(n)): what to load to resume. */
  static edgeNodes(n: number): NodeId[] {
    return rootNodes(n);
  }

  /** `edge` holds the hashes of edgeNodes(size), in the same order. */
  constructor(size: number, edge: readonly Hash[]) {
    const ids = Frontier.edgeNodes(size);
    if (edge.length !== ids.length) {
      throw new RangeError(`a frontier of size ${size} needs ${ids.length} edge hashes, got ${edge.length}`);
    }
    this.#edge = ids.map((id, i) => ({ ...id, hash: requireHash(edge[i], `edge hash ${i}`) }));
    this.#size = size;
  }

  get size(): number {
    return this.#size;
  }

  /** Appends one leaf hash; returns the complete nodes this append completed, level 0 (the leaf) first. */
  append(leafHash: Hash): StoredNode[] {
    const completed: StoredNode[] = [];
    this.#add(leafHash, completed);
    return completed;
  }

  /** Appends one leaf hash, keeping no list of what it completed (the chain check stores nothing). */
  push(leafHash: Hash): void {
    this.#add(leafHash, null);
  }

  #add(leafHash: Hash, completed: StoredNode[] | null): void {
    if (this.#size >= Number.MAX_SAFE_INTEGER) throw new RangeError('the tree is full');
    let node: StoredNode = { level: 0, index: this.#size, hash: requireHash(leafHash, 'leaf hash') };
    completed?.push(node);
    for (let left = this.#edge.at(-1); left?.level === node.level; left = this.#edge.at(-1)) {
      this.#edge.pop();
      node = { level: node.level + 1, index: left.index / 2, hash: nodeHash(left.hash, node.hash) };
      completed?.push(node);
    }
    this.#edge.push(node);
    this.#size += 1;
  }

  root(): Hash {
    return foldRight(this.#edge.map((node) => node.hash));
  }

  /** Another frontier as this one stands, to grow apart from it. */
  clone(): Frontier {
    return new Frontier(this.#size, this.#edge.map((node) => node.hash));
  }
}
