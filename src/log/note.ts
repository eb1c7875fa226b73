// The signed checkpoint of Nomos's verifiable log, in the formats third-party verifiers already speak: the body is a
// C2SP tlog-checkpoint (c2sp.org/tlog-checkpoint) and the whole is a C2SP signed note (c2sp.org/signed-note) with
// an Ed25519 signature, byte for byte what golang.org/x/mod/sumdb/note writes and opens.
import { createHash, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';

export interface Checkpoint {
  readonly origin: string;
  readonly size: number;
  readonly root: Buffer;
}

/** A checkpoint as read from a body, which another log may have extended with opaque lines Nomos never writes. */
export interface ParsedCheckpoint extends Checkpoint {
  readonly extensions: readonly string[];
}

export class NoteError extends Error {
  constructor(
    readonly code: 'malformed' | 'unsigned' | 'bad_signature' | 'bad_checkpoint',
    message: string,
  ) {
    super(message);
    this.name = 'NoteError';
  }
}

// A checkpoint is a few hundred bytes; the cap only bounds what a hostile peer can make us scan. Go's note.Open caps
// the signature lines at 100, which the spec's floor of 16 leaves room for.
const MAX_NOTE_BYTES = 1 << 20;
const MAX_SIGNATURES = 100;
const SIGNATURE_PREFIX = '\u2014 ';
const ED25519 = 0x01;
const ROOT_BYTES = 32;

// Node's own decoder skips what is not base64; a signature that decodes leniently would be a second spelling of the
// same bytes, so only the canonical encoding is read.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeBase64(text: string): Buffer | undefined {
  if (!BASE64.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}

/** Valid UTF-8 (no lone surrogate) and no ASCII control character but newline, as the spec requires of a whole note. */
function isNoteText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 && c !== 0x0a) return false;
  }
  return !/[\uD800-\uDFFF]/u.test(text);
}

function isValidName(name: string): boolean {
  return name !== '' && isNoteText(name) && !/[\p{White_Space}+]/u.test(name);
}

function requireName(name: string): void {
  if (!isValidName(name)) throw new NoteError('malformed', `key name ${JSON.stringify(name)} is empty or holds a space, a '+' or a control character`);
}

function rawPublicKey(key: KeyObject): Buffer {
  if (key.asymmetricKeyType !== 'ed25519') throw new TypeError(`expected an Ed25519 key, got ${key.asymmetricKeyType ?? key.type}`);
  const { x } = (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'jwk' });
  if (typeof x !== 'string') throw new TypeError('the Ed25519 key exported no public point');
  return Buffer.from(x, 'base64url');
}

export function checkpointBody(c: Checkpoint): string {
  // The origin is also the key name the log signs with, so it keeps to the stricter rule the spec recommends.
  if (!isValidName(c.origin)) throw new NoteError('bad_checkpoint', `origin ${JSON.stringify(c.origin)} is empty or holds a space, a '+' or a control character`);
  if (!Number.isSafeInteger(c.size) || c.size < 0) throw new NoteError('bad_checkpoint', `tree size ${c.size} is not a non-negative safe integer`);
  if (c.root.length !== ROOT_BYTES) throw new NoteError('bad_checkpoint', `root hash is ${c.root.length} bytes, not ${ROOT_BYTES}`);
  return `${c.origin}\n${c.size}\n${c.root.toString('base64')}\n`;
}

export function parseCheckpointBody(body: string): ParsedCheckpoint {
  const bad = (why: string) => new NoteError('bad_checkpoint', `checkpoint ${why}`);
  if (!body.endsWith('\n')) throw bad('body does not end in a newline');
  if (!isNoteText(body)) throw bad('body holds a control character or is not valid UTF-8');
  const [origin, size, root, ...extensions] = body.slice(0, -1).split('\n');
  if (origin === undefined || size === undefined || root === undefined) throw bad('body has fewer than three lines (origin, tree size, root hash)');
  // Clients must not assume the origin follows the recommended form, so only emptiness is refused here.
  if (origin === '') throw bad('origin is empty');
  if (!/^(?:0|[1-9][0-9]*)$/.test(size)) throw bad(`tree size ${JSON.stringify(size)} is not a decimal without leading zeroes`);
  const n = Number(size);
  if (!Number.isSafeInteger(n)) throw bad(`tree size ${size} is beyond what this verifier counts exactly (2^53 - 1)`);
  const hash = decodeBase64(root);
  if (hash?.length !== ROOT_BYTES) throw bad(`root hash ${JSON.stringify(root)} is not the base64 of ${ROOT_BYTES} bytes`);
  const empty = extensions.indexOf('');
  if (empty >= 0) throw bad(`extension line ${empty + 1} is empty`);
  return { origin, size: n, root: hash, extensions };
}

// The key as both the key hash and the verifier key spell it: its signature type byte, then the 32 raw bytes.
function typedKey(publicKey: KeyObject): Buffer {
  return Buffer.concat([Buffer.from([ED25519]), rawPublicKey(publicKey)]);
}

function hashOf(name: string, typed: Buffer): Buffer {
  requireName(name);
  return createHash('sha256').update(name, 'utf8').update('\n').update(typed).digest().subarray(0, 4);
}

export function keyHash(name: string, publicKey: KeyObject): Buffer {
  return hashOf(name, typedKey(publicKey));
}

export function verifierKey(name: string, publicKey: KeyObject): string {
  const typed = typedKey(publicKey);
  return `${name}+${hashOf(name, typed).toString('hex')}+${typed.toString('base64')}`;
}

export function signNote(body: string, name: string, privateKey: KeyObject): string {
  const hash = keyHash(name, privateKey);
  if (privateKey.type !== 'private') throw new TypeError('signNote needs a private key');
  if (!body.endsWith('\n')) throw new NoteError('malformed', 'note text does not end in a newline');
  if (!isNoteText(body)) throw new NoteError('malformed', 'note text holds a control character or is not valid UTF-8');
  const signature = sign(null, Buffer.from(body, 'utf8'), privateKey);
  const note = `${body}\n${SIGNATURE_PREFIX}${name} ${Buffer.concat([hash, signature]).toString('base64')}\n`;
  // Whatever we serve must open with our own verifier.
  if (Buffer.byteLength(note, 'utf8') > MAX_NOTE_BYTES) throw new NoteError('malformed', 'signed note would exceed 1 MiB');
  return note;
}

interface SignatureLine {
  readonly name: string;
  readonly keyHash: Buffer;
  readonly signature: Buffer;
}

function parseSignatureLine(line: string, number: number): SignatureLine {
  const bad = (why: string) => new NoteError('malformed', `signature line ${number}: ${why}`);
  if (!line.startsWith(SIGNATURE_PREFIX)) throw bad('does not start with an em dash and a space');
  const rest = line.slice(SIGNATURE_PREFIX.length);
  const space = rest.indexOf(' ');
  if (space < 0) throw bad('has no space between key name and signature');
  const name = rest.slice(0, space);
  if (!isValidName(name)) throw bad(`key name ${JSON.stringify(name)} is not valid`);
  const bytes = decodeBase64(rest.slice(space + 1));
  if (bytes === undefined) throw bad('signature is not standard base64');
  if (bytes.length < 5) throw bad('signature is shorter than a key hash and one byte');
  return { name, keyHash: bytes.subarray(0, 4), signature: bytes.subarray(4) };
}

/**
 * The text of a signed note that carries a valid signature by `name` with `publicKey`; signatures by other keys are
 * skipped, as a cosigned or rotated note carries them. Checks the signature only, whatever the text says.
 */
export function verifyNote(note: string, name: string, publicKey: KeyObject): string {
  const ours = keyHash(name, publicKey);
  const id = `${name}+${ours.toString('hex')}`;
  if (Buffer.byteLength(note, 'utf8') > MAX_NOTE_BYTES) throw new NoteError('malformed', 'note exceeds 1 MiB');
  if (!isNoteText(note)) throw new NoteError('malformed', 'note holds a control character or is not valid UTF-8');
  // The text may hold blank lines of its own; signature lines never do, so the last blank line is the separator.
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new NoteError('malformed', 'no blank line separates the text from its signatures');
  const body = note.slice(0, split + 1);
  const block = note.slice(split + 2);
  if (!block.endsWith('\n')) throw new NoteError('malformed', 'signature block is empty or does not end in a newline');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) throw new NoteError('malformed', `note carries ${lines.length} signatures, more than ${MAX_SIGNATURES}`);
  const signatures = lines.map((line, i) => parseSignatureLine(line, i + 1));
  const message = Buffer.from(body, 'utf8');
  let verified = false;
  for (const [i, s] of signatures.entries()) {
    if (s.name !== name || !s.keyHash.equals(ours)) continue;
    // The spec asks a verifier to reject the whole note when any signature by a known key fails, not only the first.
    if (s.signature.length !== 64 || !verify(null, message, publicKey, s.signature)) {
      throw new NoteError('bad_signature', `signature line ${i + 1} by ${id} does not verify`);
    }
    verified = true;
  }
  if (!verified) throw new NoteError('unsigned', `note carries no signature by ${id}`);
  return body;
}

/** A checkpoint from a note signed by `name` with `publicKey`; the origin is the caller's to compare. */
export function openNote(note: string, name: string, publicKey: KeyObject): { body: string; checkpoint: ParsedCheckpoint } {
  const body = verifyNote(note, name, publicKey);
  return { body, checkpoint: parseCheckpointBody(body) };
}
