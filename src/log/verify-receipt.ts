// The offline check of a receipt (src/log/receipts.ts): needs nothing but the file and, to rule out a forged log,
// the log's public key from somewhere other than the file. Pure: it reads no database, no network, no clock.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson, dataHash } from './leaf.ts';
import { leafHash, verifyInclusion } from './merkle.ts';
import { keyHash, NoteError, openNote, parseCheckpointBody, type ParsedCheckpoint } from './note.ts';
import { Receipt, type ReceiptEntry, type ReceiptEvent, readReceipt } from './receipts.ts';

export type CheckName = 'signature' | 'checkpoint' | 'leaf' | 'inclusion' | 'data' | 'summary';

export interface ReceiptCheck {
  readonly check: CheckName;
  /** The entry checked; null for the checks of the whole receipt. */
  readonly position: number | null;
  readonly ok: boolean;
  readonly detail: string;
}

export interface ReceiptVerification {
  /** Every check passed. */
  readonly verified: boolean;
  /** The signature was checked with a key the auditor gave, not only the receipt's own. */
  readonly keySupplied: boolean;
  readonly receipt: Receipt;
  readonly checks: readonly ReceiptCheck[];
}

/** Not a receipt: the first field that is missing or wrong, by its path (entries.2.leaf_index). */
export class MalformedReceipt extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'MalformedReceipt';
  }
}

export function parseReceipt(json: unknown): Receipt {
  const parsed = Receipt.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new MalformedReceipt(issue.path.length > 0 ? issue.path.join('.') : '(the receipt)', issue.message);
}

/** A key the auditor trusts: PEM (SPKI), or a C2SP verifier key `<name>+<key hash>+<base64(0x01 ‖ key)>`, which also pins the name. */
export interface TrustedKey {
  readonly key: KeyObject;
  readonly name: string | null;
}

export function trustedKeyOf(text: string): TrustedKey {
  const trimmed = text.trim();
  if (trimmed.startsWith('-----BEGIN')) {
    const key = createPublicKey(trimmed);
    if (key.asymmetricKeyType !== 'ed25519') throw new TypeError(`the key is ${key.asymmetricKeyType ?? 'of no known type'}, not Ed25519`);
    return { key, name: null };
  }
  // A name holds no '+', the key's base64 may.
  const [, name, hash, typed] = /^([^+]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+=*)$/.exec(trimmed) ?? [];
  const raw = typed === undefined ? undefined : Buffer.from(typed, 'base64');
  if (name === undefined || hash === undefined || raw?.length !== 33 || raw[0] !== 0x01) {
    throw new TypeError('the key is neither a PEM public key nor a verifier key (<name>+<key hash>+<base64 key>)');
  }
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.subarray(1).toString('base64url') }, format: 'jwk' });
  if (keyHash(name, key).toString('hex') !== hash) throw new TypeError(`the verifier key's hash ${hash} is not that of its name and key`);
  return { key, name };
}

const Leaf = z.object({ position: z.number(), stream: z.string(), type: z.string(), metadata: z.unknown(), data_sha256: z.string() });
type Leaf = z.infer<typeof Leaf>;

function readLeaf(bytes: Buffer): Leaf | string {
  try {
    const parsed = Leaf.safeParse(JSON.parse(bytes.toString('utf8')));
    return parsed.success ? parsed.data : `the leaf lacks ${parsed.error.issues[0]?.path.join('.') ?? 'a field'}`;
  } catch {
    return 'the leaf is not JSON';
  }
}

/** The checkpoint the note claims, signature aside: the entries are still checked against it when the signature fails. */
function claimedCheckpoint(note: string): ParsedCheckpoint | null {
  try {
    return parseCheckpointBody(note.slice(0, note.lastIndexOf('\n\n') + 1));
  } catch {
    return null;
  }
}

function signatureCheck(receipt: Receipt, trusted: TrustedKey | undefined): { check: ReceiptCheck; checkpoint: ParsedCheckpoint | null } {
  const fail = (detail: string) => ({ check: { check: 'signature' as const, position: null, ok: false, detail }, checkpoint: claimedCheckpoint(receipt.checkpoint) });
  const name = trusted?.name ?? receipt.origin;
  let key: KeyObject;
  try {
    key = trusted?.key ?? createPublicKey(receipt.public_key);
  } catch (error) {
    return fail(`the receipt's public_key is not a public key: ${(error as Error).message}`);
  }
  const whose = trusted ? 'the key supplied' : "the receipt's own public_key (not independently supplied)";
  try {
    const { checkpoint } = openNote(receipt.checkpoint, name, key);
    return { check: { check: 'signature', position: null, ok: true, detail: `the checkpoint is signed by ${name}+${keyHash(name, key).toString('hex')}, ${whose}` }, checkpoint };
  } catch (error) {
    if (error instanceof NoteError || error instanceof TypeError) return fail(`the checkpoint is not signed by ${whose} under the name ${name}: ${error.message}`);
    throw error;
  }
}

function checkpointCheck(receipt: Receipt, checkpoint: ParsedCheckpoint | null, trusted: TrustedKey | undefined): ReceiptCheck {
  const wrong: string[] = [];
  if (checkpoint === null) wrong.push('the checkpoint note does not read as a checkpoint');
  else {
    if (checkpoint.origin !== receipt.origin) wrong.push(`its origin is ${checkpoint.origin}, the receipt says ${receipt.origin}`);
    const pinned = trusted?.name ?? null;
    if (pinned !== null && checkpoint.origin !== pinned) wrong.push(`its origin is ${checkpoint.origin}, the key supplied is ${pinned}'s`);
    if (checkpoint.size !== receipt.tree_size) wrong.push(`its tree size is ${checkpoint.size}, the receipt says ${receipt.tree_size}`);
  }
  const detail = wrong.length > 0 ? wrong.join('; ') : `checkpoint of ${receipt.origin} at tree size ${receipt.tree_size}`;
  return { check: 'checkpoint', position: null, ok: wrong.length === 0, detail };
}

function entryChecks(entry: ReceiptEntry, checkpoint: ParsedCheckpoint | null, stream: string | undefined): { checks: ReceiptCheck[]; leaf: Leaf | null } {
  const at = (check: CheckName, ok: boolean, detail: string): ReceiptCheck => ({ check, position: entry.position, ok, detail });
  const bytes = Buffer.from(entry.leaf, 'base64');
  const included = checkpoint !== null && verifyInclusion(entry.leaf_index, checkpoint.size, leafHash(bytes), entry.inclusion.map((h) => Buffer.from(h, 'base64')), checkpoint.root);
  const inclusion = at(
    'inclusion',
    included,
    included
      ? `leaf ${entry.leaf_index} is in the tree of size ${checkpoint.size}`
      : checkpoint === null
        ? 'no checkpoint root to check the inclusion path against'
        : `the inclusion path of leaf ${entry.leaf_index} does not lead to the checkpoint's root at tree size ${checkpoint.size}`,
  );
  const leaf = readLeaf(bytes);
  if (typeof leaf === 'string') return { checks: [at('leaf', false, leaf), inclusion, at('data', false, 'the leaf is unreadable, so nothing commits to the data')], leaf: null };
  const wrong: string[] = [];
  if (leaf.position !== entry.position) wrong.push(`the leaf is of position ${leaf.position}, the entry says ${entry.position}`);
  if (leaf.type !== entry.type) wrong.push(`the leaf is a ${leaf.type}, the entry says ${entry.type}`);
  if (stream !== undefined && leaf.stream !== stream) wrong.push(`the leaf is of stream ${leaf.stream}, the receipt's first entry of ${stream}`);
  const hash = dataHash(entry.data);
  return {
    checks: [
      at('leaf', wrong.length === 0, wrong.length === 0 ? `a ${leaf.type} of ${leaf.stream}` : wrong.join('; ')),
      inclusion,
      hash !== leaf.data_sha256 && entry.redacted
        ? // Redacted: the data is a copy with the secret taken out, so only the leaf (proven above) speaks for the original.
          at('data', true, `redacted by ${JSON.stringify(entry.redacted.by)} (${entry.redacted.reason}; PayloadRedacted at ${entry.redacted.redaction_position}): the data shown is the redacted copy, the leaf commits to the original`)
        : at('data', hash === leaf.data_sha256, hash === leaf.data_sha256 ? "the data hashes to the leaf's data_sha256" : `the data hashes to ${hash}, the leaf commits to ${leaf.data_sha256}`),
    ],
    leaf,
  };
}

/** Whether the summary and the entries are what the entries' data and leaves say; each disagreement named. */
function summaryCheck(receipt: Receipt, leaves: readonly (Leaf | null)[]): ReceiptCheck {
  const events: ReceiptEvent[] = receipt.entries.map((e, i) => ({ position: e.position, type: e.type, data: e.data, stream: leaves[i]?.stream ?? '', metadata: leaves[i]?.metadata }));
  const fail = (detail: string): ReceiptCheck => ({ check: 'summary', position: null, ok: false, detail });
  let read;
  try {
    read = readReceipt(receipt.kind, receipt.id, events);
  } catch (error) {
    return fail(`the entries do not make a receipt of ${receipt.kind} ${receipt.id}: ${(error as Error).message}`);
  }
  const held = receipt.entries.map((e) => e.position);
  if (canonicalJson(read.positions) !== canonicalJson(held)) return fail(`the entries are positions ${held.join(', ')}; a receipt of ${receipt.kind} ${receipt.id} holds ${read.positions.join(', ')}`);
  const derived: Record<string, unknown> = read.summary;
  const stated: Record<string, unknown> = receipt.summary;
  const differ = Object.keys(derived).filter((k) => canonicalJson(derived[k] ?? null) !== canonicalJson(stated[k] ?? null));
  if (differ.length > 0) return fail(differ.map((k) => `summary.${k} says ${canonicalJson(stated[k] ?? null)}, the entries ${canonicalJson(derived[k] ?? null)}`).join('; '));
  return { check: 'summary', position: null, ok: true, detail: "the summary is what the entries' data and leaves say" };
}

/**
 * Checks a parsed receipt JSON: the checkpoint's signature (with `trusted`, the auditor's key, else the receipt's
 * own), each entry's leaf, inclusion path and data, and the summary. MalformedReceipt when it is not a receipt.
 */
export function verifyReceipt(json: unknown, trusted?: TrustedKey): ReceiptVerification {
  const receipt = parseReceipt(json);
  const { check: signature, checkpoint } = signatureCheck(receipt, trusted);
  const checks: ReceiptCheck[] = [signature, checkpointCheck(receipt, checkpoint, trusted)];
  const leaves: (Leaf | null)[] = [];
  let stream: string | undefined;
  for (const entry of receipt.entries) {
    const checked = entryChecks(entry, checkpoint, stream);
    stream ??= checked.leaf?.stream;
    leaves.push(checked.leaf);
    checks.push(...checked.checks);
  }
  checks.push(summaryCheck(receipt, leaves));
  return { verified: checks.every((c) => c.ok), keySupplied: trusted !== undefined, receipt, checks };
}
