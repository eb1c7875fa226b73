// The log's signing key file: interchangeable with what `openssl genpkey` writes, refused with the file named when it
// is anything else, written owner-only and never overwritten, created once on the first start.
import { execFileSync, spawnSync } from 'node:child_process';
import { createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureSigningKey,
  generateSigningKey,
  privateKeyPem,
  publicKeyPem,
  readSigningKey,
  writeSigningKey,
} from '../../src/log/keys.ts';
import { checkpointBody, openNote, signNote } from '../../src/log/note.ts';

const HAS_OPENSSL = spawnSync('openssl', ['version']).status === 0;

describe('signing key files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nomos-log-keys-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(!HAS_OPENSSL)('reads a key made by `openssl genpkey -algorithm ed25519` and signs with it (skipped: openssl is not on PATH)', async () => {
    const file = join(dir, 'openssl.pem');
    execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', file]);
    const key = await readSigningKey(file);
    expect(key.asymmetricKeyType).toBe('ed25519');
    // The same bytes both ways: what we write, openssl could have written, and the public halves agree.
    expect(privateKeyPem(key)).toBe(await readFile(file, 'utf8'));
    expect(publicKeyPem(key)).toBe(execFileSync('openssl', ['pkey', '-in', file, '-pubout'], { encoding: 'utf8' }));
    const body = checkpointBody({ origin: 'nomos.example/log', size: 1, root: Buffer.alloc(32, 1) });
    const opened = openNote(signNote(body, 'nomos.example/log', key), 'nomos.example/log', createPublicKey(publicKeyPem(key)));
    expect(opened.checkpoint.size).toBe(1);
  });

  it.skipIf(!HAS_OPENSSL)('writes a key openssl reads (skipped: openssl is not on PATH)', async () => {
    const file = join(dir, 'ours-for-openssl.pem');
    const key = generateSigningKey();
    await writeSigningKey(file, key);
    const text = execFileSync('openssl', ['pkey', '-in', file, '-noout', '-text'], { encoding: 'utf8' });
    expect(text).toMatch(/ED25519 Private-Key/);
    expect(execFileSync('openssl', ['pkey', '-in', file, '-pubout'], { encoding: 'utf8' })).toBe(publicKeyPem(key));
  });

  it('refuses an RSA key, naming the file', async () => {
    const file = join(dir, 'rsa.pem');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    await writeFile(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    await expect(readSigningKey(file)).rejects.toThrow(`signing key ${file} is not an Ed25519 key but rsa`);
  });

  it('names the file when it is missing, unreadable, not PEM or not a private key', async () => {
    const missing = join(dir, 'nowhere', 'key.pem');
    await expect(readSigningKey(missing)).rejects.toThrow(`signing key ${missing} does not exist`);
    const directory = join(dir, 'a-directory');
    await mkdir(directory);
    await expect(readSigningKey(directory)).rejects.toThrow(`signing key ${directory} cannot be read`);
    const garbage = join(dir, 'garbage.pem');
    await writeFile(garbage, 'not a key\n', { mode: 0o600 });
    await expect(readSigningKey(garbage)).rejects.toThrow(`signing key ${garbage} is not a PEM file`);
    const publicOnly = join(dir, 'public.pem');
    await writeFile(publicOnly, publicKeyPem(generateSigningKey()), { mode: 0o600 });
    await expect(readSigningKey(publicOnly)).rejects.toThrow(`signing key ${publicOnly} holds no unencrypted private key`);
  });

  it('uses a key others can read, and says so', async () => {
    const file = join(dir, 'open.pem');
    const key = generateSigningKey();
    await writeFile(file, privateKeyPem(key));
    await chmod(file, 0o644);
    const warnings: string[] = [];
    const read = await readSigningKey(file, { warn: (message) => warnings.push(message) });
    expect(read.equals(key)).toBe(true);
    expect(warnings).toEqual([`signing key ${file} is readable by group or others (mode 644); chmod 600 it`]);
    await chmod(file, 0o600);
    await readSigningKey(file, { warn: (message) => warnings.push(message) });
    expect(warnings).toHaveLength(1);
  });

  it('writes a new key owner-only, creating its directories, and never overwrites one', async () => {
    const file = join(dir, 'deep', 'er', 'log.pem');
    const key = generateSigningKey();
    await writeSigningKey(file, key);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readSigningKey(file)).equals(key)).toBe(true);
    const before = await readFile(file, 'utf8');
    await expect(writeSigningKey(file, generateSigningKey())).rejects.toThrow(`signing key ${file} already exists; refusing to overwrite it`);
    expect(await readFile(file, 'utf8')).toBe(before);
  });

  it('refuses to write what is not an Ed25519 private key', async () => {
    const file = join(dir, 'wrong.pem');
    await expect(writeSigningKey(file, createPublicKey(generateSigningKey()))).rejects.toThrow(/Ed25519 private key/);
    await expect(writeSigningKey(file, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey)).rejects.toThrow(/Ed25519 private key/);
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  it('creates the key on the first start and reads the same one afterwards', async () => {
    const file = join(dir, 'embedded', 'signing-key.pem');
    const first = await ensureSigningKey(file);
    expect(first.created).toBe(true);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const second = await ensureSigningKey(file);
    expect(second.created).toBe(false);
    expect(second.key.equals(first.key)).toBe(true);
    const message = Buffer.from('same key');
    expect(verify(null, message, createPublicKey(first.key), sign(null, message, second.key))).toBe(true);
  });

  it('does not replace a key file it cannot use', async () => {
    const file = join(dir, 'broken.pem');
    await writeFile(file, 'garbage\n', { mode: 0o600 });
    await expect(ensureSigningKey(file)).rejects.toThrow(`signing key ${file} is not a PEM file`);
    expect(await readFile(file, 'utf8')).toBe('garbage\n');
  });
});
