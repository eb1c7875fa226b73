// The offline receipt check catches each class of tampering: a changed command in an entry's data, a changed leaf
// byte, swapped inclusion paths, a checkpoint re-signed with another key or with a bad signature under the right
// key hash, a wrong trusted key, a summary that disagrees; a truncated or malformed file is not a receipt (exit 1,
// naming the field). The receipt is a real one, from a server on PGlite that is gone before any check runs.
import type { KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReceiptCommand } from '../../src/cli/verify-receipt.ts';
import { generateSigningKey, publicKeyPem } from '../../src/log/keys.ts';
import { signNote, verifierKey } from '../../src/log/note.ts';
import type { Receipt } from '../../src/log/receipts.ts';
import { MalformedReceipt, trustedKeyOf, verifyReceipt } from '../../src/log/verify-receipt.ts';
import { databases } from '../support/databases.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { pendingApproval } from '../support/pending-approval.ts';
import { startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

let key: KeyObject;
let original: Receipt;
let dir: string;
let keyFile: string;

/** A deep copy of the real receipt to tamper with. */
const copy = (): Receipt => structuredClone(original);
const at = (r: Receipt, type: string) => r.entries.find((e) => e.type === type)!;
const failures = (json: unknown, trusted = trustedKeyOf(publicKeyPem(key))) => verifyReceipt(json, trusted).checks.filter((c) => !c.ok).map((c) => ({ check: c.check, position: c.position }));

async function check(receipt: unknown, options: { key?: string; json?: boolean } = { key: keyFile }) {
  const file = join(dir, `r-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, typeof receipt === 'string' ? receipt : JSON.stringify(receipt));
  return verifyReceiptCommand(file, options);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nomos-verify-'));
  key = generateSigningKey();
  keyFile = join(dir, 'log.pem');
  await writeFile(keyFile, publicKeyPem(key));
  // Auth off: the pending approval is made by the default actor; the approval's actor is named by the header.
  const server = await startTestServer(databases[0]!, { executor: instantExecutor() });
  try {
    const pending = await pendingApproval(server, 'hand the data to group root');
    const approved = await server.request('POST', `/approvals/${pending.approval_id}/approve`, undefined, { 'x-nomos-actor': 'operator:alice' });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    await until('the approved execution ran', async () => ((await server.request('GET', `/executions/${pending.execution_id}`)).body.status === 'succeeded' ? true : undefined));
    await server.runtime.startSealer({ key, sealMs: 20, checkpointEvery: { events: 1, ms: null } });
    original = await until('the receipt', async () => {
      const res = await server.request('GET', `/approvals/${pending.approval_id}/receipt`);
      return res.status === 200 && res.body.summary.execution === 'succeeded' ? (res.body as Receipt) : undefined;
    });
  } finally {
    await server.close();
  }
}, 60_000);
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('verifying a receipt offline', () => {
  it('verifies the untouched receipt with the trusted key, as PEM or as a verifier key, and says whose key otherwise', async () => {
    expect(failures(original)).toEqual([]);
    const verifier = join(dir, 'verifier.txt');
    await writeFile(verifier, `${verifierKey(original.origin, key)}\n`);
    expect((await check(original, { key: verifier })).exitCode).toBe(0);
    const own = verifyReceipt(original);
    expect(own).toMatchObject({ verified: true, keySupplied: false });
    expect(own.checks.find((c) => c.check === 'signature')!.detail).toMatch(/not independently supplied/);
    const ok = await check(original);
    expect(ok.exitCode, ok.lines.join('\n')).toBe(0);
    expect(ok.lines[0]).toMatch(/^VERIFIED: approval .*: operator:alice approved `chown :0 \/srv\/data` on lxc:box; it succeeded, exit code 0$/);
  });

  it('catches a changed command in the data: the data no longer hashes to the leaf, and the summary disagrees', async () => {
    const r = copy();
    const requested = at(r, 'ExecutionRequested');
    requested.data.command = 'chown :0 /';
    expect(failures(r)).toEqual([{ check: 'data', position: requested.position }, { check: 'summary', position: null }]);
    const out = await check(r);
    expect(out.exitCode).toBe(2);
    expect(out.lines.join('\n')).toMatch(new RegExp(`data at position ${requested.position}: the data hashes to [0-9a-f]{64}, the leaf commits to`));
  });

  it('takes a redacted entry as such, saying so, but not an unredacted one whose data changed', () => {
    const r = copy();
    const finished = at(r, 'ExecutionSucceeded');
    finished.data = { ...finished.data, stdout_tail: '[REDACTED]' };
    expect(failures(r)).toEqual([{ check: 'data', position: finished.position }]);
    finished.redacted = { by: { role: 'operator', id: 'alice' }, reason: 'a token in the output', redaction_position: 999 };
    const result = verifyReceipt(r, trustedKeyOf(publicKeyPem(key)));
    expect(result.checks.filter((c) => !c.ok)).toEqual([]);
    expect(result.checks.find((c) => c.check === 'data' && c.position === finished.position)!.detail).toMatch(/^redacted by \{"role":"operator","id":"alice"\} \(a token in the output; PayloadRedacted at 999\): the data shown is the redacted copy/);
  });

  it('catches a changed leaf byte: its inclusion path no longer leads to the root', async () => {
    const r = copy();
    const granted = at(r, 'ApprovalGranted');
    const leaf = Buffer.from(granted.leaf, 'base64');
    leaf[leaf.indexOf('alice')] = 'm'.charCodeAt(0);
    granted.leaf = leaf.toString('base64');
    expect(failures(r)).toEqual([{ check: 'inclusion', position: granted.position }, { check: 'summary', position: null }]);
    expect((await check(r)).exitCode).toBe(2);
  });

  it('catches swapped inclusion paths, naming both entries', async () => {
    const r = copy();
    const [a, b] = [at(r, 'ApprovalRequested'), at(r, 'ApprovalGranted')];
    [a.inclusion, b.inclusion] = [b.inclusion, a.inclusion];
    expect(failures(r)).toEqual([{ check: 'inclusion', position: a.position }, { check: 'inclusion', position: b.position }]);
    const out = await check(r);
    expect(out.exitCode).toBe(2);
    expect(out.lines.filter((l) => l.includes('inclusion at position'))).toHaveLength(2);
  });

  it('catches a checkpoint re-signed with another key, unless the receipt carries that key and nobody supplied the real one', async () => {
    const other = generateSigningKey();
    const body = original.checkpoint.slice(0, original.checkpoint.lastIndexOf('\n\n') + 1);
    const forged = { ...copy(), checkpoint: signNote(body, original.origin, other) };
    expect(failures(forged, undefined)).toEqual([{ check: 'signature', position: null }]);
    expect((await check(forged, {})).exitCode).toBe(2);
    // A forger who swaps in their own key too passes the receipt's own key; the auditor's key is what catches it.
    const rekeyed = { ...forged, public_key: publicKeyPem(other) };
    expect(verifyReceipt(rekeyed)).toMatchObject({ verified: true, keySupplied: false });
    expect(failures(rekeyed)).toEqual([{ check: 'signature', position: null }]);
    const out = await check(rekeyed);
    expect(out.exitCode).toBe(2);
    expect(out.lines.join('\n')).toMatch(/signature: the checkpoint is not signed by the key supplied/);
  });

  it('catches a bad signature under the right key hash', async () => {
    const [body, signature] = original.checkpoint.split('\n\n') as [string, string];
    const [dash, name, sig] = signature.trimEnd().split(' ') as [string, string, string];
    const bytes = Buffer.from(sig, 'base64');
    bytes[10]! ^= 0x01; // past the 4-byte key hash
    const r = { ...copy(), checkpoint: `${body}\n\n${dash} ${name} ${bytes.toString('base64')}\n` };
    expect(failures(r)).toEqual([{ check: 'signature', position: null }]);
    expect(verifyReceipt(r, trustedKeyOf(publicKeyPem(key))).checks[0]!.detail).toMatch(/does not verify/);
    expect((await check(r, {})).exitCode).toBe(2);
  });

  it('refuses the receipt under a trusted key that is not the log\'s', async () => {
    const wrong = join(dir, 'wrong.pem');
    await writeFile(wrong, publicKeyPem(generateSigningKey()));
    const out = await check(original, { key: wrong });
    expect(out.exitCode).toBe(2);
    expect(out.lines).toEqual([expect.stringMatching(/^NOT VERIFIED: .* failed 1 of \d+ checks$/), expect.stringMatching(/^ {2}signature: the checkpoint is not signed by the key supplied .* carries no signature by/)]);
  });

  it('catches a summary that disagrees with the entries, naming the field', async () => {
    const r = copy();
    r.summary.approval!.by = { role: 'operator', id: 'mallory' };
    r.summary.exit_code = 1;
    expect(failures(r)).toEqual([{ check: 'summary', position: null }]);
    const out = await check(r);
    expect(out.exitCode).toBe(2);
    expect(out.lines.join('\n')).toMatch(/summary\.approval says .*mallory.*, the entries .*alice.*; summary\.exit_code says 1, the entries 0/);
    // An entry left out while the summary still tells of it disagrees too (leaving out both is beyond a receipt: docs).
    const short = copy();
    short.entries = short.entries.filter((e) => e.type !== 'ApprovalGranted');
    expect(failures(short)).toEqual([{ check: 'summary', position: null }]);
  });

  it('answers a truncated or malformed file with exit 1, naming the field', async () => {
    const text = JSON.stringify(original);
    const truncated = await check(text.slice(0, text.length / 2));
    expect(truncated).toMatchObject({ exitCode: 1, lines: [expect.stringMatching(/is not JSON/)] });
    const noIndex = copy() as unknown as { entries: Record<string, unknown>[] };
    delete noIndex.entries[2]!.leaf_index;
    expect(await check(noIndex)).toMatchObject({ exitCode: 1, lines: [expect.stringMatching(/is not a receipt: entries\.2\.leaf_index: /)] });
    const badHash = copy();
    badHash.entries[0]!.inclusion[0] = 'AAAA';
    expect(await check(badHash)).toMatchObject({ exitCode: 1, lines: [expect.stringMatching(/entries\.0\.inclusion\.0: not the base64 of a 32-byte hash/)] });
    expect(await check({ ...copy(), format: 'nomos-receipt/2' })).toMatchObject({ exitCode: 1, lines: [expect.stringMatching(/: format: /)] });
    expect(() => verifyReceipt({})).toThrow(MalformedReceipt);
    expect(await check(original, { key: join(dir, 'absent.pem') })).toMatchObject({ exitCode: 1, lines: [expect.stringMatching(/cannot read the key/)] });
    expect(await verifyReceiptCommand(join(dir, 'absent.json'), {})).toMatchObject({ exitCode: 1, lines: [expect.stringMatching(/cannot read/)] });
    const json = await check(text.slice(0, 10), { json: true });
    expect(JSON.parse(json.lines[0]!)).toMatchObject({ verified: false, error: expect.stringMatching(/not JSON/) });
  });
});
