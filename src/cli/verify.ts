// `nomos verify` and `nomos log export DIR`: an auditor's checks of the verifiable log (docs/verifiable-log.md).
// Online, against the database: the chain (every leaf, root and signature) and then every read model re-folded
// and compared; the outcome is recorded for GET /log. Offline, against an export: the leaves and the checkpoints.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Config } from '../config.ts';
import type { Db } from '../ports/db.ts';
import { leafOf } from '../log/leaf.ts';
import { Frontier, leafHash } from '../log/merkle.ts';
import { openNote } from '../log/note.ts';
import { eventsBetween, listCheckpoints, sealState } from '../log/store.ts';
import { type ChainFinding, type ChainReport, isTampering, verifyChain } from '../log/verify-chain.ts';
import { checkFold, type FoldReport } from '../projections/fold-check.ts';
import { claimDataDir } from './data-dir-lock.ts';

/** The exit statuses, documented in docs/verifiable-log.md. */
export const VERIFY_EXIT = { verified: 0, error: 1, log_tampered: 2, read_model_differs: 3 } as const;

export interface VerifyOptions {
  /** An export's directory (nomos log export): verify offline. */
  readonly dir?: string;
  /** A PEM public key the auditor trusts; otherwise the log's own. */
  readonly key?: string;
  readonly json?: boolean;
  /** false: the chain only, no read models. */
  readonly readModels?: boolean;
  /** Threads hashing leaves (verifyChain's default when absent). */
  readonly threads?: number;
}

export interface VerifyOutcome {
  readonly lines: string[];
  readonly exitCode: number;
}

async function trustedKey(path: string | undefined): Promise<KeyObject | null> {
  if (path === undefined) return null;
  try {
    return createPublicKey(await readFile(path, 'utf8'));
  } catch (error) {
    throw new Error(`--key ${path}: not a readable PEM public key (${error instanceof Error ? error.message : String(error)})`);
  }
}

function describe(f: ChainFinding): string {
  switch (f.kind) {
    case 'edited':
      return `EDITED: the event at position ${f.position} (leaf ${f.leaf_index}, ${f.type} in ${f.stream}) is not the event that was sealed there`;
    case 'deleted':
      return `DELETED: the event at position ${f.position} (leaf ${f.leaf_index}) was sealed and is no longer in the log`;
    case 'inserted':
      return `INSERTED: an event at position ${f.position} (${f.type} in ${f.stream}) is in no sealed leaf, though later positions are: written after its place was sealed`;
    case 'swapped':
      return `SWAPPED: the events at positions ${f.positions[0]} and ${f.positions[1]} hold each other's sealed content`;
    case 'bad_checkpoint':
      return `CHECKPOINT ${f.tree_size} DOES NOT VERIFY: ${f.reason}`;
    case 'root_mismatch':
      return f.of === 'events'
        ? `CHECKPOINT ${f.tree_size}: the events in the log do not give its signed root`
        : `CHECKPOINT ${f.tree_size}: the stored tree (log_nodes) does not give its signed root: it was rewritten`;
    case 'tree_broken':
      return `TREE: ${f.detail}`;
    case 'redacted':
      return `redacted (not tampering): the payload at position ${f.position}, by ${JSON.stringify(f.by)} (PayloadRedacted at ${f.redaction_position}: ${f.reason}); its leaf holds by the hash kept`;
    default: {
      const never: never = f;
      return String(never);
    }
  }
}

function foldLines(report: FoldReport): string[] {
  if (report.skipped) return [`read model ${report.projection}: not compared: ${report.skipped}`];
  if (report.ok) return [`read model ${report.projection}: the fold of the log (${report.events} events; ${report.tables.map((t) => `${t.table} ${t.rows} rows`).join(', ')})`];
  return [
    `READ MODEL ${report.projection} IS NOT THE FOLD OF THE LOG:`,
    ...report.differences.map((d) =>
      d.column !== null
        ? `  ${d.table} ${JSON.stringify(d.key)} column ${d.column}: read model ${JSON.stringify(d.live)}, fold ${JSON.stringify(d.fold)}`
        : d.live === null
          ? `  ${d.table} ${JSON.stringify(d.key)}: missing from the read model`
          : `  ${d.table} ${JSON.stringify(d.key)}: in the read model, not in the fold`,
    ),
  ];
}

function chainLines(chain: ChainReport, keyGiven: boolean, seconds: number): string[] {
  const lines = [
    `log ${chain.origin}: ${chain.events} events, ${chain.leaves} sealed (${chain.unsealed} not yet), ${chain.checkpoints} checkpoints; signatures checked with ${keyGiven ? 'the key given (--key)' : "the log's own key (not independently supplied: pass --key)"}`,
    `log: checked in ${seconds.toFixed(1)} s (${Math.round(chain.events / Math.max(seconds, 1e-3))} events/s)`,
  ];
  lines.push(...chain.findings.map(describe), ...(chain.more > 0 ? [`… and ${chain.more} more findings`] : []));
  if (!chain.findings.some(isTampering)) lines.push('log: every leaf, root and signature verifies; each checkpoint extends the one before');
  return lines;
}

/** Online: the database the configuration names (the embedded one only while no server holds it). */
export async function verifyOnline(config: Config, options: VerifyOptions): Promise<VerifyOutcome> {
  const key = await trustedKey(options.key);
  const release = config.databaseUrl ? null : await claimDataDir(config.dataDir, { create: false });
  const [{ openDb }, { migrate }] = await Promise.all([import('../adapters/db/open.ts'), import('../adapters/db/migrate.ts')]);
  const db = await openDb(config);
  try {
    await migrate(db);
    const began = performance.now();
    const chain = await verifyChain(db, key, (pem) => createPublicKey(pem), options.threads === undefined ? {} : { threads: options.threads });
    const seconds = (performance.now() - began) / 1000;
    const folds: FoldReport[] = [];
    if (options.readModels !== false) {
      // The projections (and what they load: the tokenizer's tables) only when the read models are checked.
      const [{ SqlEventStore }, { projections }] = await Promise.all([import('../adapters/eventstore/sql.ts'), import('../runtime.ts')]);
      const store = new SqlEventStore(db);
      try {
        for (const projection of projections) folds.push(await checkFold(db, store, projection));
      } finally {
        await store.close();
      }
    }
    const exitCode = chain.findings.some(isTampering) ? VERIFY_EXIT.log_tampered : folds.some((f) => !f.ok && f.skipped === null) ? VERIFY_EXIT.read_model_differs : VERIFY_EXIT.verified;
    const lines = [...chainLines(chain, key !== null, seconds), ...folds.flatMap(foldLines)];
    lines.push(exitCode === 0 ? 'verified' : exitCode === 2 ? 'NOT VERIFIED: the log was changed after it was sealed' : 'NOT VERIFIED: a read model is not the fold of the log');
    await record(db, exitCode, lines.at(-1)!, { chain, folds });
    return { lines: options.json ? [JSON.stringify({ exit_code: exitCode, chain, read_models: folds }, null, 2)] : lines, exitCode };
  } finally {
    await db.close();
    await release?.();
  }
}

async function record(db: Db, exitCode: number, summary: string, findings: { chain: ChainReport; folds: FoldReport[] }): Promise<void> {
  const kept = { chain: findings.chain.findings, more: findings.chain.more, read_models: findings.folds.filter((f) => !f.ok).map((f) => ({ projection: f.projection, skipped: f.skipped, differences: f.differences.slice(0, 20) })) };
  await db.query('INSERT INTO log_verifications (ok, exit_code, summary, findings) VALUES ($1, $2, $3, $4)', [exitCode === 0, exitCode, summary, JSON.stringify(kept)]);
}

const noteFile = (size: number) => `${String(size).padStart(20, '0')}.note`;

/** `nomos log export DIR`: the leaves as the events give them now, the checkpoints as signed, the public key. */
export async function exportLog(config: Config, dir: string): Promise<string[]> {
  const release = config.databaseUrl ? null : await claimDataDir(config.dataDir, { create: false });
  const { openDb } = await import('../adapters/db/open.ts');
  const db = await openDb(config);
  try {
    const state = await sealState(db);
    if (!state) throw new Error('the log is not sealed: nothing to export');
    await mkdir(join(dir, 'checkpoints'), { recursive: true });
    const { rows } = await db.query<{ position: string }>('SELECT position FROM log_leaves ORDER BY leaf_index');
    const sealed = new Set(rows.map((r) => Number(r.position)));
    const out: string[] = [];
    let after = 0;
    for (;;) {
      const page = await eventsBetween(db, after, state.lastPosition, 5_000);
      for (const e of page) if (sealed.has(e.position)) out.push(leafOf(e).toString('utf8'));
      if (page.length < 5_000) break;
      after = page.at(-1)!.position;
    }
    await writeFile(join(dir, 'leaves.jsonl'), out.length > 0 ? `${out.join('\n')}\n` : '');
    let checkpoints = 0;
    for (let before: number | null = null; ; ) {
      const page = await listCheckpoints(db, 1_000, before);
      for (const c of page) await writeFile(join(dir, 'checkpoints', noteFile(c.treeSize)), c.note);
      checkpoints += page.length;
      if (page.length < 1_000) break;
      before = page.at(-1)!.treeSize;
    }
    await writeFile(join(dir, 'public-key.pem'), state.publicKey);
    return [`exported ${out.length} leaves, ${checkpoints} checkpoints and the public key of ${state.origin} to ${dir}`, `check it with: nomos verify --dir ${dir} [--key PEM]`];
  } finally {
    await db.close();
    await release?.();
  }
}

/** Offline: an export's leaves against its checkpoints. */
export async function verifyOffline(dir: string, options: VerifyOptions): Promise<VerifyOutcome> {
  const key = (await trustedKey(options.key)) ?? createPublicKey(await readFile(join(dir, 'public-key.pem'), 'utf8'));
  const names = (await readdir(join(dir, 'checkpoints'))).filter((n) => n.endsWith('.note')).sort();
  const findings: string[] = [];
  const checkpoints: { size: number; root: Buffer }[] = [];
  let origin: string | null = null;
  for (const name of names) {
    const note = await readFile(join(dir, 'checkpoints', name), 'utf8');
    const claimed = note.split('\n', 1)[0] ?? '';
    origin ??= claimed;
    try {
      const { checkpoint } = openNote(note, origin, key);
      checkpoints.push({ size: checkpoint.size, root: checkpoint.root });
    } catch (error) {
      findings.push(`CHECKPOINT ${name} DOES NOT VERIFY: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  checkpoints.sort((a, b) => a.size - b.size);
  const tree = new Frontier(0, []);
  let next = 0;
  let lastPosition = 0;
  let previous = 0;
  const lines = createInterface({ input: createReadStream(join(dir, 'leaves.jsonl'), 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line === '') continue;
    let position: unknown;
    try {
      position = (JSON.parse(line) as { position?: unknown }).position;
    } catch {
      findings.push(`LEAF ${tree.size}: not JSON`);
    }
    if (typeof position !== 'number' || position <= lastPosition) findings.push(`LEAF ${tree.size}: position ${String(position)} is not after ${lastPosition}`);
    else lastPosition = position;
    tree.append(leafHash(Buffer.from(line, 'utf8')));
    while (next < checkpoints.length && checkpoints[next]!.size === tree.size) {
      const c = checkpoints[next++]!;
      if (!tree.root().equals(c.root)) findings.push(`CHECKPOINT ${c.size}: the leaves do not give its signed root: a leaf from ${previous} to ${c.size - 1} (positions up to ${lastPosition}) was changed, added or removed`);
      previous = c.size;
    }
  }
  for (const c of checkpoints.slice(next)) findings.push(`CHECKPOINT ${c.size}: the export has only ${tree.size} leaves`);
  const exitCode = findings.length > 0 ? VERIFY_EXIT.log_tampered : VERIFY_EXIT.verified;
  const out = [
    `export ${dir}: ${tree.size} leaves, ${checkpoints.length} checkpoints of ${origin ?? '(none)'}; signatures checked with ${options.key ? 'the key given (--key)' : "the export's own public-key.pem (pass --key to check with one you trust)"}`,
    ...findings,
    exitCode === 0 ? 'verified' : 'NOT VERIFIED',
  ];
  return { lines: options.json ? [JSON.stringify({ exit_code: exitCode, leaves: tree.size, checkpoints: checkpoints.length, findings }, null, 2)] : out, exitCode };
}
