// `nomos verify`'s checks on PGlite and PostgreSQL, tampering as someone with write access to the database would
// (the append-only trigger turned off): an edited event, a deleted one, a swapped pair and a forged checkpoint are
// each named by the chain check; a read-model row changed by hand is named by projection, table, key and column.
// On PostgreSQL the command itself runs too, its exit status per outcome, and offline against an export.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicKey, type KeyObject } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateSigningKey } from '../../src/log/keys.ts';
import { checkpointBody, signNote } from '../../src/log/note.ts';
import { verifyChain } from '../../src/log/verify-chain.ts';
import { checkFold } from '../../src/projections/fold-check.ts';
import { projections } from '../../src/runtime.ts';
import { execNomos } from '../support/cli-process.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

describe.each(databases)('nomos verify on $name', (database) => {
  let server: TestServer;
  let key: KeyObject;
  let sessions: string[];

  beforeEach(async () => {
    server = await startTestServer(database);
    key = generateSigningKey();
    sessions = [];
    const session = async (goal: string) => {
      const id = (await server.request('POST', '/sessions')).body.session_id as string;
      expect((await server.request('POST', `/sessions/${id}/commands`, { type: 'set_goal', goal })).status).toBe(200);
      sessions.push(id);
    };
    const sealed = (leaves: number) =>
      until('sealed and checkpointed', async () => {
        const log = (await server.request('GET', '/log')).body;
        return log.lag_events === 0 && log.checkpoint?.tree_size === log.tree_size && log.tree_size >= leaves ? true : undefined;
      });
    await session('check the backups');
    await session('rotate the logs');
    await server.runtime.startSealer({ key, sealMs: 20, checkpointEvery: { events: 1, ms: null } });
    await sealed(4);
    // A second checkpoint over more events.
    await session('renew the certificate');
    await sealed(6);
    // Read models caught up with every event.
    await server.request('GET', `/sessions/${sessions[2]}?min_position=${(await server.request('GET', '/log')).body.head_position}`);
  }, 60_000);
  afterEach(async () => server?.close());

  const db = () => server.runtime.db;
  /** The chain check on this thread alone, and again with the leaves hashed on two threads in pages of two: one report. */
  const chain = async () => {
    const alone = await verifyChain(db(), null, (pem) => createPublicKey(pem), { threads: 0 });
    expect(await verifyChain(db(), null, (pem) => createPublicKey(pem), { threads: 2, page: 2 })).toEqual(alone);
    return alone;
  };
  /** As an intruder with the database's password would: past the append-only trigger. */
  const tamper = (sql: string, params: unknown[] = []) =>
    db().transaction(async (tx) => {
      await tx.query('SET LOCAL session_replication_role = replica');
      await tx.query(sql, params);
    });
  const positionOf = async (type: string, nth = 0) => Number((await db().query<{ p: string }>('SELECT global_position AS p FROM events WHERE type = $1 ORDER BY global_position', [type])).rows[nth]!.p);

  it('verifies an untouched log and read models', async () => {
    const report = await chain();
    expect(report.findings).toEqual([]);
    expect(report.leaves).toBe(report.events);
    for (const projection of projections) {
      const fold = await checkFold(db(), server.runtime.store, projection);
      expect({ projection: fold.projection, ok: fold.ok, skipped: fold.skipped, differences: fold.differences }).toEqual({ projection: projection.name, ok: true, skipped: null, differences: [] });
    }
  });

  it('names an edited event, a deleted one and a swapped pair by position', async () => {
    const edited = await positionOf('GoalSet', 0);
    await tamper(`UPDATE events SET data = jsonb_set(data, '{goal}', '"wipe the backups"') WHERE global_position = $1`, [edited]);
    const deleted = await positionOf('SessionStarted', 1);
    await tamper('DELETE FROM events WHERE global_position = $1', [deleted]);
    const [a, b] = [await positionOf('GoalSet', 1), await positionOf('GoalSet', 2)];
    await tamper(`UPDATE events e SET data = o.data FROM events o WHERE (e.global_position, o.global_position) IN (($1::bigint, $2::bigint), ($2::bigint, $1::bigint))`, [a, b]);
    const { findings } = await chain();
    expect(findings).toContainEqual(expect.objectContaining({ kind: 'edited', position: edited, type: 'GoalSet' }));
    expect(findings).toContainEqual(expect.objectContaining({ kind: 'deleted', position: deleted }));
    expect(findings).toContainEqual({ kind: 'swapped', positions: [a, b] });
    expect(findings.filter((f) => f.kind === 'edited' || f.kind === 'deleted' || f.kind === 'swapped')).toHaveLength(3);
    expect(findings).toContainEqual(expect.objectContaining({ kind: 'root_mismatch', of: 'events' }));
  });

  it('names an event written into a gap already sealed past, and a stored tree rewritten, cut or emptied', async () => {
    // An append rolled back leaves a gap in the positions, as a failed command does; the log is sealed past it.
    const gap = await db()
      .transaction(async (tx) => {
        const { rows } = await tx.query<{ p: string }>("INSERT INTO events (event_id, stream_name, stream_position, type, data, metadata) VALUES (gen_random_uuid(), 'gap', 0, 'GoalSet', '{}', '{}') RETURNING global_position AS p");
        throw Object.assign(new Error('rolled back'), { position: Number(rows[0]!.p) });
      })
      .catch((error: { position: number }) => error.position);
    expect(gap).toBeGreaterThan(0);
    const before = (await server.request('GET', '/log')).body.tree_size as number;
    expect((await server.request('POST', `/sessions/${sessions[0]}/commands`, { type: 'set_goal', goal: 'check the backups twice' })).status).toBe(200);
    await until('sealed past the gap', async () => {
      const log = (await server.request('GET', '/log')).body;
      return log.lag_events === 0 && log.checkpoint?.tree_size === log.tree_size && log.tree_size > before ? true : undefined;
    });
    await tamper("INSERT INTO events (global_position, event_id, stream_name, stream_position, type, data, metadata) VALUES ($1, gen_random_uuid(), 'forged', 0, 'GoalSet', '{}', '{}')", [gap]);
    await tamper("UPDATE log_nodes SET hash = decode(repeat('07', 32), 'hex') WHERE level = 0 AND idx = 1");
    await tamper('DELETE FROM log_nodes WHERE level = 0 AND idx = 2');
    await tamper("UPDATE log_nodes SET hash = decode('0102', 'hex') WHERE level = 0 AND idx = 3");
    const first = await chain();
    expect(first.findings).toContainEqual({ kind: 'inserted', position: gap, stream: 'forged', type: 'GoalSet' });
    expect(first.findings).toContainEqual(expect.objectContaining({ kind: 'edited', leaf_index: 1 }));
    expect(first.findings).toContainEqual({ kind: 'tree_broken', detail: 'leaf 2 has no hash in log_nodes' });
    expect(first.findings).toContainEqual({ kind: 'tree_broken', detail: 'leaf 3\'s hash in log_nodes is not 32 bytes' });
    // The events still fold to every signed root: it is the stored tree that was rewritten.
    expect(first.findings).toContainEqual(expect.objectContaining({ kind: 'root_mismatch', of: 'stored_tree' }));
    expect(first.findings.some((f) => f.kind === 'root_mismatch' && f.of === 'events')).toBe(false);
    const { rows } = await db().query<{ n: string }>('SELECT count(*) AS n FROM log_leaves');
    await tamper('DELETE FROM log_leaves WHERE leaf_index = 4');
    const second = await chain();
    expect(second.findings).toContainEqual({ kind: 'tree_broken', detail: 'leaf 4 is missing from log_leaves (the next is 5)' });
    expect(second.findings).toContainEqual({ kind: 'tree_broken', detail: `the seal says ${rows[0]!.n} leaves; log_leaves holds 4` });
  });

  it('names a forged checkpoint: signed by another key, or a root changed under the signature', async () => {
    const { rows } = await db().query<{ tree_size: string; note: string }>('SELECT tree_size, note FROM log_checkpoints ORDER BY tree_size');
    const [first, second] = [rows[0]!, rows[1]!];
    const origin = first.note.split('\n')[0]!;
    const forged = signNote(checkpointBody({ origin, size: Number(first.tree_size), root: Buffer.alloc(32, 7) }), origin, generateSigningKey());
    await db().query('UPDATE log_checkpoints SET note = $1 WHERE tree_size = $2', [forged, first.tree_size]);
    const lines = second.note.split('\n');
    lines[2] = Buffer.alloc(32, 9).toString('base64');
    await db().query("UPDATE log_checkpoints SET note = $1, root = decode($2, 'hex') WHERE tree_size = $3", [lines.join('\n'), '09'.repeat(32), second.tree_size]);
    const { findings } = await chain();
    expect(findings).toContainEqual(expect.objectContaining({ kind: 'bad_checkpoint', tree_size: Number(first.tree_size) }));
    expect(findings).toContainEqual(expect.objectContaining({ kind: 'bad_checkpoint', tree_size: Number(second.tree_size) }));
    expect(findings).toContainEqual({ kind: 'root_mismatch', tree_size: Number(second.tree_size), of: 'events' });
    expect(findings.some((f) => f.kind === 'edited' || f.kind === 'deleted')).toBe(false);
  });

  it('names a read-model row changed by hand by projection, table, key and column', async () => {
    await db().query(`UPDATE sessions SET goal = 'nothing to see' WHERE id = $1`, [sessions[1]]);
    await db().query('DELETE FROM goals WHERE session_id = $1', [sessions[2]]);
    const sessionsFold = await checkFold(db(), server.runtime.store, projections.find((p) => p.name === 'sessions')!);
    expect(sessionsFold.ok).toBe(false);
    expect(sessionsFold.differences).toEqual([{ table: 'sessions', key: { id: sessions[1] }, column: 'goal', live: 'nothing to see', fold: 'rotate the logs' }]);
    const plans = await checkFold(db(), server.runtime.store, projections.find((p) => p.name === 'plans')!);
    expect(plans.differences).toEqual([expect.objectContaining({ table: 'goals', column: null, live: null })]);
    expect(plans.differences[0]!.key).toMatchObject({ session_id: sessions[2] });
    // The chain itself is untouched.
    expect((await chain()).findings).toEqual([]);
  });

  // The command end to end needs a database another process can open: PostgreSQL.
  it.runIf(database.name === 'postgres')('exits 0 verified, 3 for a read model, 2 for the log; offline against an export too (PostgreSQL only: the command is another process, which cannot open an in-memory PGlite)', async () => {
    const env = { DATABASE_URL: await databaseUrl() };
    const clean = await execNomos(['verify'], env);
    expect({ code: clean.code, out: clean.stdout }).toMatchObject({ code: 0, out: expect.stringContaining('verified') });
    expect((await server.request('GET', '/log')).body.verification).toMatchObject({ ok: true, exit_code: 0 });
    const dir = mkdtempSync(join(tmpdir(), 'nomos-export-'));
    expect((await execNomos(['log', 'export', dir], env)).code).toBe(0);
    expect((await execNomos(['verify', '--dir', dir], env)).code).toBe(0);
    await db().query(`UPDATE sessions SET goal = 'nothing to see' WHERE id = $1`, [sessions[0]]);
    const folded = await execNomos(['verify'], env);
    expect(folded.code).toBe(3);
    expect(folded.stdout).toContain(`sessions {"id":"${sessions[0]}"} column goal: read model "nothing to see", fold "check the backups"`);
    await tamper(`UPDATE events SET data = jsonb_set(data, '{goal}', '"wipe"') WHERE global_position = $1`, [await positionOf('GoalSet', 0)]);
    const tampered = await execNomos(['verify', '--no-read-models'], env);
    expect(tampered.code).toBe(2);
    expect(tampered.stdout).toMatch(/EDITED: the event at position \d+/);
    // The same with the leaves hashed on threads (the built thread's entry, as an installed nomos runs it).
    const threaded = await execNomos(['verify', '--no-read-models', '--threads', '2'], env);
    const untimed = (out: string) => out.replace(/^log: checked in .*$/m, '');
    expect({ code: threaded.code, out: untimed(threaded.stdout) }).toEqual({ code: 2, out: untimed(tampered.stdout) });
    expect(threaded.stdout).toMatch(/^log: checked in \d+\.\d s \(\d+ events\/s\)$/m);
    expect((await execNomos(['verify', '--threads', 'many'], env)).stderr).toContain('a whole number of threads from 0 to 64');
    const dir2 = mkdtempSync(join(tmpdir(), 'nomos-export-'));
    expect((await execNomos(['log', 'export', dir2], env)).code).toBe(0);
    const offline = await execNomos(['verify', '--dir', dir2], env);
    expect(offline.code).toBe(2);
    expect(offline.stdout).toContain('do not give its signed root');
  });

  async function databaseUrl(): Promise<string> {
    const { rows } = await db().query<{ name: string }>('SELECT current_database() AS name');
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${rows[0]!.name}`;
    return url.toString();
  }
});
