// The executions projection folds a batch in memory; the generated log of batching.test.ts rarely takes the
// rules' corners, so this one does on purpose, over rows an earlier batch left: executions requested twice,
// approvals decided twice, from another session's stream or for executions that do not exist, outcomes that
// overwrite outcomes, and a session deleted mid-batch (its rows kept, marked) and then written again.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/ports/db.ts';
import type { StoredEvent } from '../../src/ports/event-store.ts';
import { executionsProjection, getApproval, getExecution, listSessionExecutions } from '../../src/projections/executions.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { projectInBatches, SessionFeed } from './feed.ts';

const verdict = { risk_class: 'config_mutation' as const, reason: 'restarts a service', rule: 'systemctl', inner_commands: [] };
const requested = (execution_id: string, command = 'systemctl restart nginx') => ({
  execution_id, target: 'host:web-1', command, verdict, rules_version: 'v1', command_hash: 'h', binding: 'b', known_long: false,
});
const approval = (approval_id: string, execution_id: string) => ({
  approval_id, execution_id, command: 'systemctl restart nginx', target: 'host:web-1', risk_class: 'config_mutation', binding: 'b', expires_at: '2026-08-02T10:00:00.000Z',
});
const tails = (stdout_tail: string) => ({ stdout_tail, stderr_tail: '', duration_ms: 40 });

interface Ids {
  readonly x1: string;
  readonly xb: string;
  readonly xg: string;
  readonly p1: string;
  readonly p2: string;
  readonly pa: string;
  readonly pg: string;
  readonly unknown: string;
}

/** Events already projected (`before`) and the batch under test (`batch`), in log order. */
function scenario(): { before: StoredEvent[]; batch: StoredEvent[]; gone: SessionFeed; ids: Ids } {
  const a = new SessionFeed(randomUUID(), '2026-08-01T10:00:00.000Z');
  const b = new SessionFeed(randomUUID(), '2026-08-01T11:00:00.000Z');
  const gone = new SessionFeed(randomUUID(), '2026-08-01T12:00:00.000Z');
  const ids: Ids = { x1: randomUUID(), xb: randomUUID(), xg: randomUUID(), p1: randomUUID(), p2: randomUUID(), pa: randomUUID(), pg: randomUUID(), unknown: randomUUID() };

  a.add('ExecutionRequested', requested(ids.x1));
  a.add('ApprovalRequested', approval(ids.p1, ids.x1));
  b.add('ExecutionRequested', requested(ids.xb));
  b.add('ExecutionStarted', { execution_id: ids.xb });
  gone.add('ExecutionRequested', requested(ids.xg));
  gone.add('ApprovalRequested', approval(ids.pg, ids.xg));
  const before = [a, b, gone].flatMap((feed) => feed.events.splice(0)).sort((x, y) => x.position - y.position);

  a.add('ExecutionRequested', requested(ids.x1, 'requested again'));
  b.add('ApprovalGranted', { approval_id: ids.p1 });
  a.add('ApprovalDenied', { approval_id: ids.p1, reason: 'too late' });
  a.add('ExecutionStarted', { execution_id: ids.x1 });
  a.add('ExecutionSucceeded', { execution_id: ids.x1, exit_code: 0, ...tails('ok') });
  a.add('ExecutionFailed', { execution_id: ids.x1, exit_code: 2, signal: 'SIGTERM', error: 'boom', ...tails('after all') });
  b.add('ExecutionTimedOut', { execution_id: ids.xb, limit_ms: 100, ...tails('slow') });
  b.add('ApprovalRequested', approval(ids.p2, ids.unknown));
  b.add('ExecutionRefused', { execution_id: ids.unknown, reason: 'retry_cap', detail: 'three failures' });
  b.add('ApprovalExpired', { approval_id: ids.p2 });
  gone.add('ApprovalRequested', approval(ids.pa, ids.x1));
  gone.add('SessionDeleted', { reason: null });
  a.add('ApprovalGranted', { approval_id: ids.pa });
  gone.add('ApprovalGranted', { approval_id: ids.pg });
  gone.add('ExecutionStarted', { execution_id: ids.xg });
  gone.add('ExecutionRequested', requested(ids.xg, 'second life'));
  b.add('ExecutionRequested', requested(ids.xg, 'same id, other session'));
  const batch = [a, b, gone].flatMap((feed) => feed.events).sort((x, y) => x.position - y.position);
  return { before, batch, gone, ids };
}

describe.each(databases)('executions projection, batched, on $name', (database) => {
  let t: TestDb;
  let db: Db;

  beforeAll(async () => {
    t = await database.open();
    db = t.db;
  });
  afterAll(async () => {
    await t.close();
  });

  const project = (before: readonly StoredEvent[], batch: readonly StoredEvent[], size: number) => projectInBatches(db, executionsProjection, batch, size, before);

  it('gives the rows one event per transaction gives, whatever the batch size', async () => {
    const { before, batch } = scenario();
    const oneByOne = await project(before, batch, 1);
    for (const size of [2, 3, 5, batch.length]) expect(await project(before, batch, size), `batches of ${size}`).toEqual(oneByOne);
  });

  it('takes each corner of the rules as the rules say', async () => {
    const { before, batch, gone, ids } = scenario();
    await project(before, batch, batch.length);

    // Granted from another stream, denied too late, then an approval of a deleted session took it over and was granted.
    expect(await getApproval(db, ids.p1)).toMatchObject({ status: 'granted', decision_reason: null, session_deleted: false });
    expect(await getExecution(db, ids.x1)).toMatchObject({
      command: 'systemctl restart nginx', status: 'approved', approval_id: ids.pa, exit_code: 2, signal: 'SIGTERM', error: 'boom', stdout_tail: 'after all', session_deleted: false,
    });
    expect(await getExecution(db, ids.xb)).toMatchObject({ status: 'timed_out', exit_code: null, error: 'killed at the hard limit of 100 ms', stdout_tail: 'slow' });
    expect(await getApproval(db, ids.p2)).toMatchObject({ status: 'expired', execution_id: ids.unknown });
    expect(await getExecution(db, ids.unknown)).toBeNull();
    // The deleted session's rows stay, marked; what its stream says after the deletion still applies to them.
    expect(await getApproval(db, ids.pa)).toMatchObject({ status: 'granted', session_deleted: true });
    expect(await getApproval(db, ids.pg)).toMatchObject({ status: 'granted', session_deleted: true });
    expect(await listSessionExecutions(db, gone.sessionId)).toMatchObject([{ id: ids.xg, command: 'systemctl restart nginx', status: 'running', session_deleted: true }]);
  });
});
