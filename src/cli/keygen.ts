// `nomos keygen FILE`: a new Ed25519 signing key for the verifiable log (NOMOS_SIGNING_KEY), written 0600 and never
// over an existing file; prints the public half and the verifier key auditors check checkpoints with.
import { generateSigningKey, publicKeyPem, writeSigningKey } from '../log/keys.ts';
import { verifierKey } from '../log/note.ts';
import { logOrigin } from '../log/sealer.ts';

export async function keygen(file: string, origin: string | undefined): Promise<string[]> {
  const key = generateSigningKey();
  await writeSigningKey(file, key);
  const name = origin ?? logOrigin(key);
  return [
    `wrote ${file} (Ed25519, PKCS#8 PEM, mode 0600): give every server sharing the database NOMOS_SIGNING_KEY=${file}`,
    `origin: ${name}${origin === undefined ? ' (the default for this key; NOMOS_LOG_ORIGIN sets another)' : ''}`,
    `verifier key: ${verifierKey(name, key)}`,
    publicKeyPem(key).trimEnd(),
  ];
}
