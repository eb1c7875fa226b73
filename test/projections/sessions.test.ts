// The sessions read model on real databases: the aggregates an audit needs without reading a transcript,
// times taken from the events (closed_at stays the completion time), a truthful pending_approvals, the
// blocker from approvals, executions and the agent's words (never null for partial or failed; words the facts
// contradict set aside), and the list's filters and keyset pages.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/ports/db.ts';
import { MIGRATIONS_DIR } from '../../src/adapters/db/migrate.ts';
import type { StoredEvent } from '../../src/ports/event-store.ts';
import type { RefusalReason } from '../../src/domain/session/events.ts';
import {
  getSession,
  InvalidCursorError,
  listSessions,
  recentUnfinishedSessions,
  type SessionFilter,
  type SessionView,
  sessionsProjection,
} from '../../src/projections/sessions.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { applyEvents, SessionFeed, turn } from './feed.ts';

const NOTHING = 'no fact and no phrase in the last message or the summary named a cause';

function started(at: string, id: string = randomUUID()): SessionFeed {
  const feed = new SessionFeed(id, at);
  feed.add('SessionStarted', { session_id: id }, { at });
  return feed;
}

function setGoal(feed: SessionFeed, goal: string): string {
  const goal_id = randomUUID();
  feed.add('GoalSet', { goal_id, goal, title: goal.slice(0, 120) });
  return goal_id;
}

function complete(feed: SessionFeed, outcome: 'success' | 'partial' | 'failed', summary = `ended ${outcome}`, goal_id: string | null = null): void {
  feed.add('TaskCompleted', { goal_id, outcome, summary, status: outcome === 'failed' ? 'failed' : 'done' });
}

describe.each(databases)('sessions projection on $name', (database) => {
  let t: TestDb;
  let db: Db;
  const project = (feed: SessionFeed) => applyEvents(db, sessionsProjection, feed.events.splice(0));
  const session = async (id: string): Promise<SessionView> => {
    const s = await getSession(db, id);
    if (s === null) throw new Error(`no session ${id}`);
    return s;
  };

  beforeAll(async () => {
    t = await database.open();
    db = t.db;
  });
  afterAll(async () => {
    await t.close();
  });

  it('aggregates messages, turns, tool calls, top tools and entities, and titles the session with its goal', async () => {
    const feed = started('2026-07-18T11:28:00.000Z');
    turn(feed, { user: 'ZimaOS cannot move folders on ludo-library' });
    await project(feed);
    expect((await session(feed.sessionId)).title).toBeNull(); // no goal yet: no title
    const goal = 'Diagnose and fix ZimaOS folder move/delete failures on ludo-library';
    turn(feed, {
      tools: [{ name: 'set_goal' }, { name: 'search_knowledge' }, { name: 'get_entity', args: { slug: 'vm:zimaos' } }, { name: 'run', args: { target: 'host:strong' } }],
      text: 'The export root is owned by root.',
    });
    setGoal(feed, goal);
    turn(feed, {
      user: 'go ahead',
      tools: [
        { name: 'run', args: { target: 'host:strong' } },
        { name: 'run', args: { target: 'host:hubris' }, error: 'timed out' },
        { name: 'update_plan_step' },
        { name: 'upsert_knowledge', args: { about: ['vm:zimaos', 'host:strong', 'pool:ludo-lvm'] } },
        { name: 'whoami' },
        { name: 'update_plan_step' },
      ],
      text: 'Fixed: unexport, chown, re-export.',
    });
    turn(feed, { user: 'thanks' }); // a turn the agent never answered has no assistant message
    complete(feed, 'success', 'root cause found and fixed', null);
    await project(feed);

    const s = await session(feed.sessionId);
    expect(s).toMatchObject({
      title: goal,
      goal,
      status: 'done',
      outcome: 'success',
      summary: 'root cause found and fixed',
      blocker: null,
      blocker_evidence: null,
      user_message_count: 3,
      assistant_message_count: 2,
      message_count: 5,
      turn_count: 2,
      tool_call_count: 10,
      pending_approvals: 0,
      approvals_requested: 0,
      entities: ['host:hubris', 'host:strong', 'pool:ludo-lvm', 'vm:zimaos'],
    });
    // Count first, then name: get_entity, search_knowledge, set_goal, upsert_knowledge and whoami tie at 1; whoami is cut.
    expect(s.top_tools).toEqual([
      { name: 'run', count: 3 },
      { name: 'update_plan_step', count: 2 },
      { name: 'get_entity', count: 1 },
      { name: 'search_knowledge', count: 1 },
      { name: 'set_goal', count: 1 },
    ]);
  });

  it('takes created_at, closed_at and last_active_at from the events, and closed_at survives trailing text and results', async () => {
    const feed = started('2026-07-15T22:22:00.000Z');
    feed.add('UserMessagePosted', { message_id: randomUUID(), text: 'deploy apt updates' }, { at: '2026-07-15T22:22:05.000Z' });
    const messageId = randomUUID();
    const toolCallId = randomUUID();
    feed.add('ToolCallRequested', { tool_call_id: toolCallId, message_id: messageId, name: 'complete_task', args: {} }, { at: '2026-07-15T22:40:00.000Z' });
    complete(feed, 'success');
    const completedAt = feed.now;
    // The agent's final text and the complete_task result arrive after completion, in the same turn.
    feed.add('AssistantMessageRecorded', { message_id: messageId, text: 'All 92 packages upgraded.' }, { at: '2026-07-15T22:41:00.000Z' });
    feed.add('ToolCallCompleted', { tool_call_id: toolCallId, result: 'ok', error: null, result_original_bytes: null }, { at: '2026-07-15T22:41:30.000Z' });
    await project(feed);

    const s = await session(feed.sessionId);
    expect(s.created_at).toBe('2026-07-15T22:22:00.000Z');
    expect(s.closed_at).toBe(completedAt);
    expect(s.last_active_at).toBe('2026-07-15T22:41:30.000Z');
    expect(s.duration_seconds).toBe(18 * 60 + 1);
    expect(s).toMatchObject({ status: 'done', assistant_message_count: 1, turn_count: 1, message_count: 2 });
    // Reading the session is not activity.
    expect((await session(feed.sessionId)).last_active_at).toBe('2026-07-15T22:41:30.000Z');
  });

  it("keeps the columns a message moves out of every index, so the row is updated in place (HOT)", async () => {
    const feed = started('2026-07-16T08:00:00.000Z');
    setGoal(feed, 'rotate the backup keys');
    feed.add('UserMessagePosted', { message_id: randomUUID(), text: 'go on' }, { at: '2026-07-16T08:00:05.000Z' });
    await project(feed);
    const row = async () => (await db.query<{ row: Record<string, unknown> }>('SELECT to_jsonb(s) AS row FROM sessions s WHERE id = $1', [feed.sessionId])).rows[0]!.row;
    const before = await row();
    feed.add('UserMessagePosted', { message_id: randomUUID(), text: 'and the next one' }, { at: '2026-07-16T08:07:00.000Z' });
    await project(feed);
    const after = await row();
    const moved = Object.keys(after).filter((column) => JSON.stringify(after[column]) !== JSON.stringify(before[column]));
    expect(moved).toContain('last_active_at');
    // What GET /sessions?since= reads through, the hour of last_active_at, moved not at all within the hour.
    expect(after.active_hour).toBe(before.active_hour);
    const { rows: indexes } = await db.query<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'sessions'");
    expect(indexes.length).toBeGreaterThan(1);
    for (const { indexdef } of indexes) for (const column of moved) expect(indexdef).not.toMatch(new RegExp(`\\b${column}\\b`));
  });

  it('reopening clears outcome, summary, blocker and closed_at, and an open session lasts until now', async () => {
    const feed = started('2026-01-10T08:00:00.000Z');
    turn(feed, { user: 'rclone backup is broken', text: "I can't run the RC API call from here." });
    complete(feed, 'partial');
    await project(feed);
    expect(await session(feed.sessionId)).toMatchObject({ status: 'done', outcome: 'partial', blocker: 'missing_capability' });

    feed.add('SessionReopened', { previous_status: 'done' }, { at: '2026-01-12T08:00:00.000Z' });
    feed.add('UserMessagePosted', { message_id: randomUUID(), text: 'lets just close this session' });
    await project(feed);
    const before = Date.now();
    const s = await session(feed.sessionId);
    expect(s).toMatchObject({ status: 'active', outcome: null, summary: null, blocker: null, blocker_evidence: null, closed_at: null });
    const expected = Math.floor((before - Date.parse('2026-01-10T08:00:00.000Z')) / 1000);
    expect(s.duration_seconds).toBeGreaterThanOrEqual(expected - 1);
    expect(s.duration_seconds).toBeLessThanOrEqual(expected + 5);
  });

  it('keeps pending_approvals truthful and blames expired approvals', async () => {
    const feed = started('2026-07-18T09:45:00.000Z');
    turn(feed, { user: 'chown the export root', tools: [{ name: 'run', args: { target: 'host:strong' } }] });
    feed.add('ApprovalRequested', { approval_id: 'a1', execution_id: 'x1', command: 'chown :10000 /mnt/media_local', target: 'host:strong', risk_class: 'config_mutation', binding: 'b', expires_at: '2026-07-18T10:00:00.000Z' });
    feed.add('ApprovalRequested', { approval_id: 'a2', execution_id: 'x2', command: 'chmod 2775 /mnt/media_local', target: 'host:strong', risk_class: 'config_mutation', binding: 'b', expires_at: '2026-07-18T10:00:00.000Z' });
    await project(feed);
    expect(await session(feed.sessionId)).toMatchObject({ pending_approvals: 2, approvals_requested: 2 });

    feed.add('ApprovalGranted', { approval_id: 'a2' });
    feed.add('ApprovalExpired', { approval_id: 'a1' });
    feed.add('ApprovalExpired', { approval_id: 'a1' }); // an approval resolved twice counts once
    await project(feed);
    expect(await session(feed.sessionId)).toMatchObject({ pending_approvals: 0, approvals_expired: 1 });

    turn(feed, { text: 'Done what I could.' });
    complete(feed, 'partial');
    await project(feed);
    expect(await session(feed.sessionId)).toMatchObject({
      blocker: 'approval_timeout',
      blocker_evidence: { source: 'event', detail: '1 approval expired' },
      pending_approvals: 0,
    });
  });

  it('counts approvals complete_task cancelled as orphaned as pending at the end', async () => {
    // The old system's lie: "Both commands are queued" with pending_approvals = 0.
    const feed = started('2026-07-19T10:00:00.000Z');
    turn(feed, { user: 'check the rclone timer', tools: [{ name: 'run', args: { target: 'lxc:rclone' } }, { name: 'run', args: { target: 'lxc:rclone' } }] });
    for (const id of ['o1', 'o2']) {
      feed.add('ApprovalRequested', { approval_id: id, execution_id: `x-${id}`, command: 'pct exec 132 systemctl status', target: 'lxc:rclone', risk_class: 'config_mutation', binding: 'b', expires_at: '2026-07-19T11:00:00.000Z' });
    }
    feed.add('ApprovalCancelled', { approval_id: 'o1', reason: 'orphaned: task completed' });
    feed.add('ApprovalCancelled', { approval_id: 'o2', reason: 'orphaned: task completed' });
    complete(feed, 'partial');
    await project(feed);
    expect(await session(feed.sessionId)).toMatchObject({
      pending_approvals: 0,
      blocker: 'approval_timeout',
      blocker_evidence: { source: 'event', detail: '2 approvals still pending at completion' },
    });
  });

  it('an approval cancelled for another reason is not a timeout; a denied one blames the denial', async () => {
    const feed = started('2026-07-19T12:00:00.000Z');
    turn(feed, { user: 'resize the pool', tools: [{ name: 'run', args: { target: 'pool:ludo-lvm' } }] });
    feed.add('ApprovalRequested', { approval_id: 'c1', execution_id: 'xc1', command: 'lvextend', target: 'pool:ludo-lvm', risk_class: 'destructive', binding: 'b', expires_at: '2026-07-19T13:00:00.000Z' });
    feed.add('ApprovalCancelled', { approval_id: 'c1', reason: 'superseded by a new plan' });
    feed.add('ApprovalRequested', { approval_id: 'd1', execution_id: 'xd1', command: 'lvextend -L+1T', target: 'pool:ludo-lvm', risk_class: 'destructive', binding: 'b', expires_at: '2026-07-19T13:00:00.000Z' });
    feed.add('ApprovalDenied', { approval_id: 'd1', reason: 'not during business hours' });
    turn(feed, { text: 'The operator said no.' });
    complete(feed, 'failed');
    await project(feed);
    expect(await session(feed.sessionId)).toMatchObject({
      status: 'failed',
      outcome: 'failed',
      pending_approvals: 0,
      approvals_requested: 2,
      approvals_expired: 0,
      blocker: 'approval_denied',
      blocker_evidence: { source: 'event', detail: '1 approval denied' },
    });
  });

  it('derives the blocker from the last assistant text when no fact explains the outcome', async () => {
    const feed = started('2026-07-19T14:00:00.000Z');
    turn(feed, { user: 'mount the share in ZimaOS', text: 'Looking into it.' });
    turn(feed, { user: 'and?', text: "I can't run commands inside vm:zimaos directly; it needs an SSH hop." });
    complete(feed, 'partial');
    await project(feed);
    expect(await session(feed.sessionId)).toMatchObject({ blocker: 'missing_capability', blocker_evidence: { source: 'text', detail: "I can't run" } });
  });

  it('text after completion fills an unknown blocker but never replaces a known one', async () => {
    const unexplained = started('2026-07-19T15:00:00.000Z');
    const { messageId } = turn(unexplained, { user: 'restart sabnzbd', tools: [{ name: 'complete_task' }] });
    complete(unexplained, 'partial');
    await project(unexplained);
    expect(await session(unexplained.sessionId)).toMatchObject({ blocker: 'unknown', blocker_evidence: { source: 'none', detail: NOTHING } });
    unexplained.add('AssistantMessageRecorded', { message_id: messageId, text: 'There is no tool to restart sabnzbd.' });
    await project(unexplained);
    expect(await session(unexplained.sessionId)).toMatchObject({
      blocker: 'missing_capability',
      blocker_evidence: { source: 'text', detail: 'There is no tool to' },
      assistant_message_count: 1,
    });

    const explained = started('2026-07-19T15:30:00.000Z');
    const second = turn(explained, { user: 'restart sabnzbd', tools: [{ name: 'run' }] });
    explained.add('ApprovalRequested', { approval_id: 'e1', execution_id: 'xe1', command: 'systemctl restart sabnzbd', target: 'lxc:arriman', risk_class: 'service_restart', binding: 'b', expires_at: '2026-07-19T16:00:00.000Z' });
    explained.add('ApprovalExpired', { approval_id: 'e1' });
    complete(explained, 'partial');
    explained.add('AssistantMessageRecorded', { message_id: second.messageId, text: "I can't run that without approval." });
    await project(explained);
    expect(await session(explained.sessionId)).toMatchObject({ blocker: 'approval_timeout', blocker_evidence: { source: 'event', detail: '1 approval expired' } });
  });

  it("a reopened session's blocker speaks of its last task; the ever-counts keep the whole history", async () => {
    const feed = started('2026-07-20T08:00:00.000Z');
    turn(feed, { user: 'update the fleet', tools: [{ name: 'run' }] });
    feed.add('ApprovalRequested', { approval_id: 'r1', execution_id: 'xr1', command: 'apt upgrade', target: 'host:netbird-vps', risk_class: 'package_upgrade', binding: 'b', expires_at: '2026-07-20T09:00:00.000Z' });
    feed.add('ApprovalExpired', { approval_id: 'r1' });
    complete(feed, 'partial');
    feed.add('SessionReopened', { previous_status: 'done' });
    turn(feed, { user: 'try again', text: 'apt upgrade timed out at the gateway.' });
    complete(feed, 'partial');
    await project(feed);
    expect(await session(feed.sessionId)).toMatchObject({
      approvals_expired: 1,
      approvals_requested: 1,
      blocker: 'tool_error',
      blocker_evidence: { source: 'text', detail: 'timed out' },
    });
  });

  it('blames a failed last turn, but not one a later turn recovered from', async () => {
    const failing = started('2026-07-20T10:00:00.000Z');
    turn(failing, { user: 'summarise the audit', text: 'Working on it…' });
    failing.add('UserMessagePosted', { message_id: randomUUID(), text: 'well?' });
    failing.add('TurnFailed', { reason: 'model_empty_response', detail: 'two empty completions' });
    complete(failing, 'failed');
    await project(failing);
    expect(await session(failing.sessionId)).toMatchObject({ blocker: 'model_empty_response', blocker_evidence: { source: 'event', detail: 'last turn failed: model_empty_response' } });

    const recovered = started('2026-07-20T11:00:00.000Z');
    recovered.add('UserMessagePosted', { message_id: randomUUID(), text: 'summarise the audit' });
    recovered.add('TurnFailed', { reason: 'model_refusal', detail: 'refused' });
    turn(recovered, { user: 'please', text: 'Here is half of it.' });
    complete(recovered, 'partial');
    await project(recovered);
    expect(await session(recovered.sessionId)).toMatchObject({ blocker: 'unknown', blocker_evidence: { source: 'none', detail: NOTHING } });
  });

  /** A run of `cat` on host:b as the execution events record it, ended as `end` says (lost_run: failed, lost while running). */
  function execution(feed: SessionFeed, end: 'succeeded' | 'failed' | 'lost_run' | 'timed_out' | RefusalReason, options: { started?: boolean } = {}): string {
    const execution_id = randomUUID();
    const verdict = { risk_class: 'reversible_low' as const, reason: 'reads', rule: 'read', inner_commands: ['cat /etc/hostname'] };
    feed.add('ExecutionRequested', { execution_id, target: 'host:b', command: 'cat /etc/hostname', verdict, rules_version: '1', command_hash: 'h', binding: 'b', known_long: false });
    // Refused as lost: approved, but never started.
    if (options.started ?? !['retry_cap', 'already_running', 'binding_mismatch', 'lost'].includes(end)) feed.add('ExecutionStarted', { execution_id });
    const tails = { stdout_tail: '', stderr_tail: '', duration_ms: 5 };
    if (end === 'succeeded') feed.add('ExecutionSucceeded', { execution_id, exit_code: 0, ...tails });
    else if (end === 'failed') feed.add('ExecutionFailed', { execution_id, exit_code: 1, signal: null, error: null, ...tails });
    else if (end === 'lost_run') feed.add('ExecutionFailed', { execution_id, exit_code: null, signal: null, error: 'lost: the server running it stopped before it ended', ...tails });
    else if (end === 'timed_out') feed.add('ExecutionTimedOut', { execution_id, limit_ms: 1000, ...tails });
    else feed.add('ExecutionRefused', { execution_id, reason: end, detail: end });
    return execution_id;
  }

  it('the storm story: runs refused as unreachable, stopped by the cap, end partial with target_unreachable', async () => {
    const feed = started('2026-07-20T14:00:00.000Z');
    turn(feed, { user: 'read the hostname of host:b', tools: [{ name: 'run' }, { name: 'run' }, { name: 'run' }] });
    execution(feed, 'unreachable');
    execution(feed, 'unreachable', { started: false });
    execution(feed, 'retry_cap');
    const { messageId } = turn(feed, { tools: [{ name: 'complete_task' }] });
    complete(feed, 'partial', 'could not read the hostname');
    feed.add('AssistantMessageRecorded', { message_id: messageId, text: 'I stopped after the same command failed three times; the host looks unreachable' });
    // Applied as a rebuild applies it, in one batch, and as the live projector does, one event at a time: the same row.
    const events = [...feed.events.splice(0)];
    await db.transaction((tx) => sessionsProjection.applyBatch(tx, events));
    const batched = await session(feed.sessionId);
    expect(batched).toMatchObject({
      outcome: 'partial',
      executions_count: 3,
      blocker: 'target_unreachable',
      blocker_evidence: { source: 'event', detail: '2 executions refused as unreachable, 1 execution refused by the retry cap' },
    });
    for (const table of ['session_tool_counts', 'session_entities']) await db.query(`DELETE FROM ${table} WHERE session_id = $1`, [feed.sessionId]);
    await db.query('DELETE FROM sessions WHERE id = $1', [feed.sessionId]);
    await applyEvents(db, sessionsProjection, events);
    expect(await session(feed.sessionId)).toEqual(batched);
  });

  it('failed, lost and host-key-refused runs are facts: tool_error or target_unreachable, with their counts', async () => {
    const ran = started('2026-07-20T14:10:00.000Z');
    execution(ran, 'succeeded');
    execution(ran, 'failed');
    execution(ran, 'lost_run');
    execution(ran, 'lost');
    execution(ran, 'timed_out');
    execution(ran, 'already_running');
    execution(ran, 'binding_mismatch');
    turn(ran, { text: "I can't run commands inside vm:zimaos directly." });
    complete(ran, 'failed');
    await project(ran);
    expect(await session(ran.sessionId)).toMatchObject({
      failed_executions: 3,
      blocker: 'tool_error',
      blocker_evidence: { source: 'event', detail: '1 execution timed out, 1 execution failed, 2 executions lost' },
    });

    const keyed = started('2026-07-20T14:20:00.000Z');
    execution(keyed, 'host_key_mismatch');
    execution(keyed, 'failed');
    complete(keyed, 'partial');
    await project(keyed);
    expect(await session(keyed.sessionId)).toMatchObject({
      blocker: 'target_unreachable',
      blocker_evidence: { source: 'event', detail: '1 execution refused for a host key mismatch, 1 execution failed' },
    });
  });

  it('a run that ends after completion fills an unknown blocker', async () => {
    const feed = started('2026-07-20T14:30:00.000Z');
    const execution_id = randomUUID();
    const verdict = { risk_class: 'reversible_low' as const, reason: 'reads', rule: 'read', inner_commands: ['sleep 100'] };
    feed.add('ExecutionRequested', { execution_id, target: 'host:b', command: 'sleep 100', verdict, rules_version: '1', command_hash: 'h', binding: 'b', known_long: false });
    feed.add('ExecutionStarted', { execution_id });
    complete(feed, 'partial');
    await project(feed);
    expect((await session(feed.sessionId)).blocker).toBe('unknown');
    feed.add('ExecutionFailed', { execution_id, exit_code: null, signal: null, error: 'lost: the server running it stopped', stdout_tail: '', stderr_tail: '', duration_ms: 9 });
    await project(feed);
    expect(await session(feed.sessionId)).toMatchObject({ blocker: 'tool_error', blocker_evidence: { source: 'event', detail: '1 execution lost' } });
  });

  it('the README example: "queued for approval" with no approval requested is set aside, not approval_timeout', async () => {
    const feed = started('2026-07-20T15:00:00.000Z');
    turn(feed, { user: 'the rclone backup is broken', tools: [{ name: 'run', args: { target: 'lxc:rclone', command: 'systemctl status rclone-backup.timer' } }], text: 'The timer is fine; the container runs out of memory.' });
    complete(feed, 'partial', 'diagnosed OOM; memory change queued for approval');
    await project(feed);
    expect(await session(feed.sessionId)).toMatchObject({
      approvals_requested: 0,
      blocker: 'unknown',
      blocker_evidence: { source: 'none', detail: `${NOTHING}; set aside: 'queued for approval' (summary: no approval was requested)` },
    });
  });

  it('the facts a phrase is checked against are the last task’s: an approval before a reopen does not back it', async () => {
    const feed = started('2026-07-20T15:30:00.000Z');
    feed.add('ApprovalRequested', { approval_id: 'q1', execution_id: 'xq1', command: 'systemctl restart rclone', target: 'lxc:rclone', risk_class: 'config_mutation', binding: 'b', expires_at: '2026-07-20T16:30:00.000Z' });
    feed.add('ApprovalGranted', { approval_id: 'q1' });
    execution(feed, 'unreachable');
    complete(feed, 'partial', 'restart queued for approval');
    await project(feed);
    expect(await session(feed.sessionId)).toMatchObject({ blocker: 'target_unreachable', blocker_evidence: { source: 'event', detail: '1 execution refused as unreachable' } });

    feed.add('SessionReopened', { previous_status: 'done' });
    turn(feed, { user: 'and the timer?', text: 'The timer change is queued for approval.' });
    complete(feed, 'partial', 'timer change queued for approval');
    await project(feed);
    expect(await session(feed.sessionId)).toMatchObject({
      approvals_requested: 1,
      blocker: 'unknown',
      blocker_evidence: {
        source: 'none',
        detail: `${NOTHING}; set aside: 'queued for approval' (last message: no approval was requested), 'queued for approval' (summary: no approval was requested)`,
      },
    });
  });

  it('keeps a deleted session, marked, out of default reads, and later events do not change it', async () => {
    const feed = started('2026-07-20T12:00:00.000Z');
    turn(feed, { user: 'hi', tools: [{ name: 'run', args: { target: 'host:strong' } }], text: 'hello' });
    feed.add('SessionDeleted', { reason: 'test data' });
    feed.add('AssistantMessageRecorded', { message_id: randomUUID(), text: 'late' });
    await project(feed);
    expect(await getSession(db, feed.sessionId)).toBeNull();
    const kept = await getSession(db, feed.sessionId, { includeDeleted: true });
    expect(kept).toMatchObject({ deleted: true, assistant_message_count: 1 });
    expect(kept!.deleted_at).toEqual(expect.any(String));
    for (const table of ['session_tool_counts', 'session_entities']) {
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE session_id = $1`, [feed.sessionId]);
      expect(rows).toEqual([{ n: 1 }]);
    }
  });

  it('the read-model migration is safe to run again over existing rows', async () => {
    await db.exec(await readFile(`${MIGRATIONS_DIR}003_read_models.sql`, 'utf8'));
    expect((await listSessions(db, { limit: 1 })).sessions).toHaveLength(1);
  });

  it('ignores events of streams that are not sessions', async () => {
    const feed = started('2026-07-20T13:00:00.000Z', 'not-a-session');
    const event = feed.events.splice(0)[0]!;
    const foreign: StoredEvent = { ...event, streamName: 'entity-host:strong' };
    await applyEvents(db, sessionsProjection, [foreign]);
    expect(await getSession(db, 'not-a-session')).toBeNull();
    expect(await getSession(db, 'host:strong')).toBeNull();
  });
});

describe.each(databases)('listing sessions on $name', (database) => {
  let t: TestDb;
  let db: Db;
  /** Newest first, as the list orders them. */
  const ids: Record<string, string> = {};

  // Ids chosen so two sessions created at the same instant are ordered by id.
  const fleet: Array<{ key: string; at: string; build: (feed: SessionFeed) => void }> = [
    { key: 'success', at: '2026-07-14T08:00:00.000Z', build: (f) => (turn(f, { user: 'apt audit', tools: [{ name: 'run', args: { target: 'host:netbird-vps' } }], text: 'done' }), complete(f, 'success')) },
    { key: 'abandoned', at: '2026-07-15T08:00:00.000Z', build: (f) => (turn(f, { user: 'rclone', tools: [{ name: 'run', args: { target: 'lxc:rclone' } }], text: 'OK, I will close this session.' }), complete(f, 'partial')) },
    {
      key: 'classifier',
      at: '2026-07-16T08:00:00.000Z',
      build: (f) => {
        turn(f, { user: 'rclone', tools: [{ name: 'run', args: { target: 'lxc:rclone' } }], text: 'curl was flagged as config_mutation.' });
        // Asked for, and granted: the classifier did stand in the way, so the phrase stands.
        f.add('ApprovalRequested', { approval_id: 'k1', execution_id: 'xk1', command: 'curl -X POST rc/sync', target: 'lxc:rclone', risk_class: 'config_mutation', binding: 'b', expires_at: '2026-07-16T09:00:00.000Z' });
        f.add('ApprovalGranted', { approval_id: 'k1' });
        complete(f, 'partial');
      },
    },
    { key: 'failed', at: '2026-07-17T08:00:00.000Z', build: (f) => (turn(f, { user: 'zimaos', tools: [{ name: 'run', args: { target: 'vm:zimaos' } }], text: 'vm: targets are not supported.' }), complete(f, 'failed')) },
    { key: 'active', at: '2026-07-18T08:00:00.000Z', build: (f) => void turn(f, { user: 'rclone again', tools: [{ name: 'get_entity', args: { slug: 'lxc:rclone' } }] }) },
    { key: 'tieA', at: '2026-07-19T08:00:00.000Z', build: (f) => void turn(f, { user: 'hello', tools: [{ name: 'get_entity', args: { slug: 'host:tie' } }], text: 'hi' }) },
    { key: 'tieB', at: '2026-07-19T08:00:00.000Z', build: (f) => void turn(f, { user: 'hello', tools: [{ name: 'get_entity', args: { slug: 'host:tie' } }], text: 'hi' }) },
  ];
  const order = ['tieB', 'tieA', 'active', 'failed', 'classifier', 'abandoned', 'success'];

  beforeAll(async () => {
    t = await database.open();
    db = t.db;
    for (const [index, s] of fleet.entries()) {
      const id = s.key.startsWith('tie') ? `00000000-0000-4000-8000-00000000000${s.key === 'tieA' ? 1 : 2}` : `${index}${randomUUID().slice(1)}`;
      ids[s.key] = id;
      const feed = started(s.at, id);
      s.build(feed);
      await applyEvents(db, sessionsProjection, feed.events);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  const keysOf = (sessions: SessionView[]) => sessions.map((s) => Object.keys(ids).find((k) => ids[k] === s.id));
  const list = async (filter: Omit<SessionFilter, 'limit'>) => keysOf((await listSessions(db, { limit: 50, ...filter })).sessions);

  it('lists newest first, ties broken by id', async () => {
    const page = await listSessions(db, { limit: 50 });
    expect(keysOf(page.sessions)).toEqual(order);
    expect(page.next_cursor).toBeNull();
  });

  it('filters by outcome, status, entity, blocker and activity', async () => {
    expect(await list({ outcome: 'partial' })).toEqual(['classifier', 'abandoned']);
    expect(await list({ status: 'failed' })).toEqual(['failed']);
    expect(await list({ status: 'active' })).toEqual(['tieB', 'tieA', 'active']);
    expect(await list({ entity_id: 'lxc:rclone' })).toEqual(['active', 'classifier', 'abandoned']);
    expect(await list({ entity_id: 'lxc:rclone', outcome: 'partial', blocker: 'user_abandoned' })).toEqual(['abandoned']);
    expect(await list({ blocker: 'classifier_overreach' })).toEqual(['classifier']);
    expect(await list({ blocker: 'missing_capability' })).toEqual(['failed']);
    expect(await list({ since: new Date('2026-07-17T08:00:00.000Z') })).toEqual(['tieB', 'tieA', 'active', 'failed']);
    expect(await list({ entity_id: 'host:nowhere' })).toEqual([]);
    // With `since` the entity is a condition on the recently active sessions rather than a walk of its own.
    expect(await list({ entity_id: 'lxc:rclone', since: new Date('2026-07-17T08:00:00.000Z') })).toEqual(['active']);
  });

  it('walks an entity’s sessions a page at a time, ties broken by id as in the whole list', async () => {
    const first = await listSessions(db, { entity_id: 'host:tie', limit: 1 });
    expect(keysOf(first.sessions)).toEqual(['tieB']);
    const second = await listSessions(db, { entity_id: 'host:tie', limit: 1, cursor: first.next_cursor! });
    expect(keysOf(second.sessions)).toEqual(['tieA']);
    expect(second.next_cursor).toBeNull();
    // The entity's rows carry their session's created_at (migrations/020), which the walk goes by.
    const { rows } = await db.query<{ same: boolean }>(
      `SELECT e.created_at = s.created_at AS same FROM session_entities e JOIN sessions s ON s.id = e.session_id WHERE s.id = ANY($1)`,
      [Object.values(ids)],
    );
    expect(rows.length).toBeGreaterThan(4);
    expect(rows.every((row) => row.same)).toBe(true);
  });

  it('pages through every session exactly once, with and without a filter', async () => {
    for (const [filter, expected] of [
      [{}, order],
      [{ status: 'active' as const }, ['tieB', 'tieA', 'active']],
      [{ entity_id: 'lxc:rclone' }, ['active', 'classifier', 'abandoned']],
    ] as const) {
      const seen: SessionView[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await listSessions(db, { ...filter, limit: 2, ...(cursor !== undefined && { cursor }) });
        seen.push(...page.sessions);
        cursor = page.next_cursor ?? undefined;
        pages++;
      } while (cursor !== undefined);
      expect(keysOf(seen)).toEqual(expected);
      expect(pages).toBe(Math.ceil(expected.length / 2));
    }
  });

  it('refuses a cursor it did not issue', async () => {
    const { next_cursor } = await listSessions(db, { limit: 1 });
    expect(next_cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const forged = [
      'not a cursor!',
      Buffer.from('{"created_at":1}').toString('base64url'),
      Buffer.from(JSON.stringify(['yesterday', ids.success])).toString('base64url'),
      Buffer.from(JSON.stringify(['2026-13-45T99:00:00.000000Z', ids.success])).toString('base64url'),
      next_cursor!.slice(0, -3),
    ];
    for (const cursor of forged) {
      await expect(listSessions(db, { limit: 2, cursor })).rejects.toSatisfy((e) => e instanceof InvalidCursorError && e.code === 'invalid_cursor');
    }
  });

  it('recentUnfinishedSessions: partial or failed, closed since, newest first, without the asking session', async () => {
    const recent = await recentUnfinishedSessions(db, { excludeSessionId: ids.failed!, since: new Date('2026-07-15T00:00:00.000Z'), limit: 5 });
    expect(recent.map((r) => r.id)).toEqual([ids.classifier, ids.abandoned]);
    expect(recent[0]).toEqual({
      id: ids.classifier,
      goal: null,
      summary: 'ended partial',
      blocker: 'classifier_overreach',
      outcome: 'partial',
      closed_at: '2026-07-16T08:00:07.000Z', // started, four events of its turn, an approval asked and granted, then TaskCompleted, a second apart
    });
    const limited = await recentUnfinishedSessions(db, { excludeSessionId: 'none', since: new Date('2026-07-01T00:00:00.000Z'), limit: 2 });
    expect(limited.map((r) => r.id)).toEqual([ids.failed, ids.classifier]);
  });
});
