// The log's Ed25519 signing key on disk: a PKCS#8 PEM file, the same one `openssl genpkey -algorithm ed25519` writes,
// so an operator can make, back up and inspect it with the tools they already have.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { type FileHandle, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface SigningKeyOptions {
  /** Told when the key file is readable by group or others; the key is still used. */
  readonly warn?: (message: string) => void;
}

function requireEd25519Private(key: KeyObject): void {
  if (key.type !== 'private' || key.asymmetricKeyType !== 'ed25519') {
    throw new TypeError(`expected an Ed25519 private key, got a ${key.asymmetricKeyType ?? ''} ${key.type} key`);
  }
}

// Our own errors carry the file system's as their cause, so a caller can still tell a missing file from a broken one.
function errnoCode(error: unknown): string | undefined {
  const source = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return (source as NodeJS.ErrnoException | undefined)?.code;
}

export function generateSigningKey(): KeyObject {
  return generateKeyPairSync('ed25519').privateKey;
}

export function privateKeyPem(key: KeyObject): string {
  requireEd25519Private(key);
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

export function publicKeyPem(key: KeyObject): string {
  return (key.type === 'private' ? createPublicKey(key) : key).export({ type: 'spki', format: 'pem' }).toString();
}

export async function readSigningKey(path: string, options: SigningKeyOptions = {}): Promise<KeyObject> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const why = errnoCode(error) === 'ENOENT' ? 'does not exist' : `cannot be read (${(error as Error).message})`;
    throw new Error(`signing key ${path} ${why}`, { cause: error });
  }
  if (!/-----BEGIN [A-Z0-9 ]+-----/.test(text)) throw new Error(`signing key ${path} is not a PEM file`);
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch (error) {
    throw new Error(`signing key ${path} holds no unencrypted private key (${(error as Error).message})`, { cause: error });
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new Error(`signing key ${path} is not an Ed25519 key but ${key.asymmetricKeyType ?? 'of unknown type'}; the log signs with Ed25519`);
  }
  // A key that others can read is a risk the operator should hear of, but refusing it would stop the log over a
  // mode bit on a volume that may not even carry Unix permissions.
  const { mode } = await stat(path);
  if ((mode & 0o077) !== 0) options.warn?.(`signing key ${path} is readable by group or others (mode ${(mode & 0o777).toString(8)}); chmod 600 it`);
  return key;
}

export async function writeSigningKey(path: string, key: KeyObject): Promise<void> {
  const pem = privateKeyPem(key);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  let file: FileHandle;
  try {
    // 'wx': a signing key is never replaced silently; losing it orphans every checkpoint verifiers have pinned.
    file = await open(path, 'wx', 0o600);
  } catch (error) {
    const why = errnoCode(error) === 'EEXIST' ? 'already exists; refusing to overwrite it' : `cannot be created (${(error as Error).message})`;
    throw new Error(`signing key ${path} ${why}`, { cause: error });
  }
  try {
    // The umask may have narrowed the mode further; the promise is exactly 0600.
    await file.chmod(0o600);
    await file.writeFile(pem);
    await file.close();
  } catch (error) {
    await file.close().catch(() => undefined);
    // A half-written file would be read as a broken key at the next start.
    await unlink(path).catch(() => undefined);
    throw error;
  }
}

export async function ensureSigningKey(path: string, options: SigningKeyOptions = {}): Promise<{ key: KeyObject; created: boolean }> {
  try {
    return { key: await readSigningKey(path, options), created: false };
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw error;
  }
  const key = generateSigningKey();
  try {
    await writeSigningKey(path, key);
    return { key, created: true };
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
  }
  // Another process started at the same moment and wrote its key first; one log has one key, so use theirs.
  return { key: await readSigningKey(path, options), created: false };
}
