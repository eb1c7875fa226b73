// The signed checkpoint is a contract with verifiers we do not write: these tests pin its bytes against the C2SP
// specs computed independently here, against notes signed by Go's golang.org/x/mod/sumdb/note, and prove that
// every malformed or forged form is refused with the code a caller can act on.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkpointBody,
  keyHash,
  NoteError,
  openNote,
  parseCheckpointBody,
  signNote,
  verifierKey,
  verifyNote,
} from '../../src/log/note.ts';

// RFC 8410 wrappers around a raw Ed25519 seed or public key, so that fixed keys need no PEM fixture.
const fromSeed = (seed: Buffer): KeyObject =>
  createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
const fromRaw = (raw: Buffer): KeyObject =>
  createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });

const SEED = Buffer.from([...Array(32).keys()]);
const KEY = fromSeed(SEED);
const PUBLIC = createPublicKey(KEY);
const NAME = 'nomos.example/log';
const ROOT = createHash('sha256').update('nomos').digest();
const CHECKPOINT = { origin: NAME, size: 42, root: ROOT };

// Checked against the independent computation in 'writes the exact bytes the specs define' before it was pinned.
const VECTOR =
  'nomos.example/log\n42\n0aUu/CZqO/c1Jl69i/cxZiaASQVHhN+kIpP0YL672l0=\n\n' +
  '\u2014 nomos.example/log lYZqReG01nFts2kPNmawwE8/Tyy00UCL6NjtUd4T0xkLiDBwx1ai+8V6SZVtCtrkHURvu/HZg7sJK2NEmT6RXnD2Vw8=\n';

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (error) {
    if (error instanceof NoteError) return error.code;
    throw error;
  }
  return 'accepted';
}

const note = () => signNote(checkpointBody(CHECKPOINT), NAME, KEY);
const [BODY, SIGNATURE] = ((n: string) => {
  const split = n.lastIndexOf('\n\n');
  return [n.slice(0, split + 1), n.slice(split + 2)];
})(note());

describe('checkpoint body', () => {
  it('is origin, decimal size and base64 root, one per line', () => {
    expect(checkpointBody(CHECKPOINT)).toBe(`nomos.example/log\n42\n${ROOT.toString('base64')}\n`);
    expect(checkpointBody({ origin: NAME, size: 0, root: Buffer.alloc(32) })).toBe(`${NAME}\n0\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n`);
  });

  it('refuses an origin, size or root a verifier could not read back', () => {
    for (const origin of ['', 'a\nb', 'a b', 'a+b', 'a\tb', 'a\u00a0b']) {
      expect(codeOf(() => checkpointBody({ ...CHECKPOINT, origin })), JSON.stringify(origin)).toBe('bad_checkpoint');
    }
    for (const size of [-1, 1.5, Number.NaN, 2 ** 53]) {
      expect(codeOf(() => checkpointBody({ ...CHECKPOINT, size })), String(size)).toBe('bad_checkpoint');
    }
    expect(codeOf(() => checkpointBody({ ...CHECKPOINT, root: Buffer.alloc(31) }))).toBe('bad_checkpoint');
  });

  it('parses back what it writes, and reports extension lines without failing', () => {
    expect(parseCheckpointBody(checkpointBody(CHECKPOINT))).toEqual({ ...CHECKPOINT, extensions: [] });
    const extended = parseCheckpointBody(`${checkpointBody(CHECKPOINT)}ext one\nanother\n`);
    expect(extended.extensions).toEqual(['ext one', 'another']);
    expect(extended.size).toBe(42);
    // Clients must not assume the origin follows the recommended form.
    expect(parseCheckpointBody(`a log with spaces\n0\n${ROOT.toString('base64')}\n`).origin).toBe('a log with spaces');
    expect(parseCheckpointBody(`o\n${2 ** 53 - 1}\n${ROOT.toString('base64')}\n`).size).toBe(2 ** 53 - 1);
  });

  it('names what is wrong in a body that is not a checkpoint', () => {
    const root = ROOT.toString('base64');
    const cases: [string, RegExp][] = [
      [`o\n1\n${root}`, /newline/],
      [`o\n1\n`, /three lines/],
      [`\n1\n${root}\n`, /origin is empty/],
      [`o\n01\n${root}\n`, /tree size "01"/],
      [`o\n-1\n${root}\n`, /tree size "-1"/],
      [`o\n 1\n${root}\n`, /tree size " 1"/],
      [`o\n${2 ** 53}\n${root}\n`, /beyond/],
      [`o\n1\n${root.slice(0, -1)}\n`, /root hash/],
      [`o\n1\n${Buffer.alloc(20).toString('base64')}\n`, /root hash/],
      [`o\n1\n${root}\n\next\n`, /extension line 1 is empty/],
      [`o\x01\n1\n${root}\n`, /control character/],
    ];
    for (const [body, message] of cases) {
      expect(() => parseCheckpointBody(body), JSON.stringify(body)).toThrow(message);
      expect(codeOf(() => parseCheckpointBody(body))).toBe('bad_checkpoint');
    }
  });
});

describe('key hash and verifier key', () => {
  it('is the first four bytes of SHA-256(name, newline, 0x01, raw public key)', () => {
    const raw = createPublicKey(KEY).export({ format: 'der', type: 'spki' }).subarray(-32);
    const expected = createHash('sha256').update(Buffer.concat([Buffer.from(NAME), Buffer.from([0x0a, 0x01]), raw])).digest().subarray(0, 4);
    expect(keyHash(NAME, PUBLIC)).toEqual(expected);
    expect(keyHash(NAME, KEY)).toEqual(expected);
    expect(verifierKey(NAME, PUBLIC)).toBe(`${NAME}+${expected.toString('hex')}+${Buffer.concat([Buffer.from([1]), raw]).toString('base64')}`);
  });

  it('refuses a key name with a space, a plus or a newline, and a key that is not Ed25519', () => {
    for (const name of ['', 'a b', 'a+b', 'a\nb', 'a\u2003b']) expect(codeOf(() => keyHash(name, PUBLIC)), JSON.stringify(name)).toBe('malformed');
    expect(() => keyHash(NAME, generateKeyPairSync('x25519').publicKey)).toThrow(/Ed25519/);
  });
});

describe('signed note', () => {
  it('writes the exact bytes the specs define', () => {
    const body = `${NAME}\n42\n${ROOT.toString('base64')}\n`;
    const raw = PUBLIC.export({ format: 'der', type: 'spki' }).subarray(-32);
    const hash = createHash('sha256').update(Buffer.concat([Buffer.from(NAME, 'utf8'), Buffer.from([0x0a, 0x01]), raw])).digest().subarray(0, 4);
    const signature = sign(null, Buffer.from(body, 'utf8'), KEY);
    const expected = `${body}\n\u2014 ${NAME} ${Buffer.concat([hash, signature]).toString('base64')}\n`;
    expect(note()).toBe(expected);
    expect(expected).toBe(VECTOR);
    expect(verifierKey(NAME, KEY)).toBe('nomos.example/log+95866a45+AQOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4');
  });

  it('opens what it signs, returning the body and the checkpoint', () => {
    const key = generateKeyPairSync('ed25519');
    const c = { origin: 'log.example.org/nomos/7', size: 1_234_567, root: createHash('sha256').update('x').digest() };
    const opened = openNote(signNote(checkpointBody(c), c.origin, key.privateKey), c.origin, key.publicKey);
    expect(opened.body).toBe(checkpointBody(c));
    expect(opened.checkpoint).toEqual({ ...c, extensions: [] });
    expect(openNote(VECTOR, NAME, PUBLIC).checkpoint).toEqual({ ...CHECKPOINT, extensions: [] });
  });

  it('refuses to sign text that is not a note body, or under a name the spec forbids', () => {
    expect(codeOf(() => signNote('no newline', NAME, KEY))).toBe('malformed');
    expect(codeOf(() => signNote('', NAME, KEY))).toBe('malformed');
    expect(codeOf(() => signNote('bell\x07\n', NAME, KEY))).toBe('malformed');
    expect(codeOf(() => signNote('lone \ud800 surrogate\n', NAME, KEY))).toBe('malformed');
    expect(codeOf(() => signNote(BODY, 'two words', KEY))).toBe('malformed');
    expect(codeOf(() => signNote(BODY, 'a+b', KEY))).toBe('malformed');
    expect(codeOf(() => signNote('x'.repeat(1 << 20) + '\n', NAME, KEY))).toBe('malformed');
    expect(() => signNote(BODY, NAME, PUBLIC)).toThrow(/private key/);
  });

  it('refuses each malformed form', () => {
    // 68 bytes end in one '=': the last character before it carries two padding bits, which must be zero.
    const nonCanonical = (text: string): string => {
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
      const last = text.length - 2;
      expect(text[last + 1]).toBe('=');
      return text.slice(0, last) + alphabet[alphabet.indexOf(text[last]!) | 1]! + '=';
    };
    const sig = SIGNATURE.slice(0, -1); // the line without its newline
    const b64 = sig.slice(`\u2014 ${NAME} `.length);
    const malformed: [string, string, RegExp][] = [
      ['text only', BODY, /no blank line/],
      ['blank line without signatures', `${BODY}\n`, /signature block is empty/],
      ['missing blank line', BODY + SIGNATURE, /no blank line/],
      ['signature line without newline', `${BODY}\n${sig}`, /does not end in a newline/],
      ['unexpected line after the signatures', `${BODY}\n${SIGNATURE}Unexpected line.\n`, /line 2: does not start with an em dash/],
      ['hyphen instead of em dash', `${BODY}\n- ${NAME} ${b64}\n`, /em dash/],
      ['two hyphens', `${BODY}\n-- ${NAME} ${b64}\n`, /em dash/],
      ['em dash without space', `${BODY}\n\u2014${NAME} ${b64}\n`, /em dash/],
      ['no signature after the name', `${BODY}\n\u2014 ${NAME}\n`, /no space/],
      ['empty signature', `${BODY}\n\u2014 ${NAME} \n`, /shorter/],
      ['name with a space', `${BODY}\n\u2014 nomos example ${b64}\n`, /base64/],
      ['name with a plus', `${BODY}\n\u2014 nomos+log ${b64}\n`, /key name/],
      ['base64 with a bad character', `${BODY}\n\u2014 ${NAME} ${b64.slice(0, 10)}!${b64.slice(11)}\n`, /base64/],
      ['base64 without padding', `${BODY}\n\u2014 ${NAME} ${b64.replace(/=+$/, '')}\n`, /base64/],
      ['base64url instead of base64', `${BODY}\n\u2014 ${NAME} ${Buffer.from(b64, 'base64').toString('base64url')}\n`, /base64/],
      ['non-canonical base64', `${BODY}\n\u2014 ${NAME} ${nonCanonical(b64)}\n`, /base64/],
      ['signature no longer than the key hash', `${BODY}\n\u2014 ${NAME} ${Buffer.from(b64, 'base64').subarray(0, 4).toString('base64')}\n`, /shorter/],
      ['control character', `\x01${note()}`, /control character/],
      ['lone surrogate', `\udc00${note()}`, /UTF-8/],
      ['over 1 MiB', `${'x'.repeat(1 << 20)}\n${note()}`, /1 MiB/],
      ['101 signatures', `${BODY}\n${SIGNATURE.repeat(101)}`, /101 signatures/],
    ];
    for (const [what, text, message] of malformed) {
      expect(codeOf(() => openNote(text, NAME, PUBLIC)), what).toBe('malformed');
      expect(() => openNote(text, NAME, PUBLIC), what).toThrow(message);
    }
    // The same signature a hundred times is within the limit and still ours.
    expect(openNote(`${BODY}\n${SIGNATURE.repeat(100)}`, NAME, PUBLIC).body).toBe(BODY);
  });

  it('finds no signature by a key it was not given', () => {
    const other = generateKeyPairSync('ed25519');
    // Same name, another key: the key hash differs, so the note is merely unsigned for us.
    const theirs = signNote(BODY, NAME, other.privateKey);
    expect(codeOf(() => openNote(theirs, NAME, PUBLIC))).toBe('unsigned');
    expect(codeOf(() => openNote(note(), 'other.example/log', PUBLIC))).toBe('unsigned');
    expect(codeOf(() => openNote(note(), NAME, other.publicKey))).toBe('unsigned');
  });

  it('refuses a flipped bit in the body or the signature', () => {
    const flip = (text: string, at: number): string => {
      const bytes = Buffer.from(text, 'base64');
      bytes[at]! ^= 0x01;
      return bytes.toString('base64');
    };
    const b64 = SIGNATURE.slice(`\u2014 ${NAME} `.length, -1);
    expect(codeOf(() => openNote(`${BODY.replace('\n42\n', '\n43\n')}\n${SIGNATURE}`, NAME, PUBLIC))).toBe('bad_signature');
    expect(codeOf(() => openNote(`${BODY.replace(NAME, 'nomos.example/loh')}\n${SIGNATURE}`, NAME, PUBLIC))).toBe('bad_signature');
    expect(codeOf(() => openNote(`${BODY}\n\u2014 ${NAME} ${flip(b64, 40)}\n`, NAME, PUBLIC))).toBe('bad_signature');
    expect(codeOf(() => openNote(`${BODY}\n\u2014 ${NAME} ${flip(b64, 67)}\n`, NAME, PUBLIC))).toBe('bad_signature');
    // A flipped key hash points at a key we do not know.
    expect(codeOf(() => openNote(`${BODY}\n\u2014 ${NAME} ${flip(b64, 0)}\n`, NAME, PUBLIC))).toBe('unsigned');
  });

  it('refuses a forged signature carrying our name and key hash', () => {
    const forger = generateKeyPairSync('ed25519').privateKey;
    const forged = Buffer.concat([keyHash(NAME, PUBLIC), sign(null, Buffer.from(BODY), forger)]).toString('base64');
    expect(codeOf(() => openNote(`${BODY}\n\u2014 ${NAME} ${forged}\n`, NAME, PUBLIC))).toBe('bad_signature');
    // A short signature under our key hash cannot be Ed25519.
    const short = Buffer.concat([keyHash(NAME, PUBLIC), Buffer.alloc(10)]).toString('base64');
    expect(codeOf(() => openNote(`${BODY}\n\u2014 ${NAME} ${short}\n`, NAME, PUBLIC))).toBe('bad_signature');
    // One bad signature by our key spoils the note even beside a good one, in either order.
    expect(codeOf(() => openNote(`${BODY}\n${SIGNATURE}\u2014 ${NAME} ${forged}\n`, NAME, PUBLIC))).toBe('bad_signature');
    expect(codeOf(() => openNote(`${BODY}\n\u2014 ${NAME} ${forged}\n${SIGNATURE}`, NAME, PUBLIC))).toBe('bad_signature');
  });

  it('finds its signature among a cosigner’s, whatever the order', () => {
    const witness = generateKeyPairSync('ed25519');
    const cosignature = signNote(BODY, 'witness.example/w1', witness.privateKey).slice(BODY.length + 1);
    for (const text of [`${BODY}\n${SIGNATURE}${cosignature}`, `${BODY}\n${cosignature}${SIGNATURE}`]) {
      expect(openNote(text, NAME, PUBLIC).checkpoint.size).toBe(42);
      expect(openNote(text, 'witness.example/w1', witness.publicKey).body).toBe(BODY);
    }
  });
});

// Test vectors from golang.org/x/mod/sumdb/note (note_test.go): keys, text and signatures made by Go's reference
// implementation, which third-party verifiers share.
describe('notes of Go’s sumdb/note', () => {
  const peterVkey = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
  const enochVkey = 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop';
  const peterSkey = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
  const text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
  const peterSig = '\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';
  const enochSig = '\u2014 EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n';
  const publicOf = (vkey: string): KeyObject => fromRaw(Buffer.from(vkey.split('+').slice(2).join('+'), 'base64').subarray(1));
  const peter = publicOf(peterVkey);
  const enoch = publicOf(enochVkey);

  it('derives Go’s verifier key and signs Go’s note byte for byte from the same seed', () => {
    const seed = Buffer.from(peterSkey.split('+').slice(4).join('+'), 'base64');
    expect(seed[0]).toBe(0x01);
    const key = fromSeed(seed.subarray(1));
    expect(verifierKey('PeterNeumann', key)).toBe(peterVkey);
    expect(verifierKey('PeterNeumann', peter)).toBe(peterVkey);
    expect(verifierKey('EnochRoot', enoch)).toBe(enochVkey);
    expect(signNote(text, 'PeterNeumann', key)).toBe(`${text}\n${peterSig}`);
  });

  it('verifies a Go-signed note, alone and beside another signer', () => {
    expect(verifyNote(`${text}\n${peterSig}`, 'PeterNeumann', peter)).toBe(text);
    expect(verifyNote(`${text}\n${peterSig}${enochSig}`, 'PeterNeumann', peter)).toBe(text);
    expect(verifyNote(`${text}\n${peterSig}${enochSig}`, 'EnochRoot', enoch)).toBe(text);
    expect(codeOf(() => verifyNote(`${text}\n${enochSig}`, 'PeterNeumann', peter))).toBe('unsigned');
    // The text is not a checkpoint: the signature holds, the body does not.
    expect(codeOf(() => openNote(`${text}\n${peterSig}`, 'PeterNeumann', peter))).toBe('bad_checkpoint');
  });

  it('refuses Go’s corrupted and malformed variants as Go does', () => {
    const corrupted = `${text}\n${peterSig.slice(0, 60)}ABCD${peterSig.slice(60)}`;
    expect(codeOf(() => verifyNote(corrupted, 'PeterNeumann', peter))).toBe('bad_signature');
    const malformed = [
      text,
      `${text}\n`,
      `${text}\n${peterSig.slice(0, -1)}`,
      `\x01${text}\n${peterSig}`,
      `${text}\n\u2014 Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=`,
      `${text}\n${peterSig}Unexpected line.\n`,
      `${text}\n${peterSig.repeat(101)}`,
    ];
    for (const n of malformed) expect(codeOf(() => verifyNote(n, 'PeterNeumann', peter)), JSON.stringify(n)).toBe('malformed');
  });
});
