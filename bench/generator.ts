// Realistic sessions for the benchmark, deterministic for a seed. Each session is played through the real
// session decider (decide + evolve, as src/commands/session.ts runs it), so every event has exactly the shape
// and metadata a command produces; the result is one batch of events per command, ready to append.
import { createHash } from 'node:crypto';
import type { NewEvent } from '../src/ports/event-store.ts';
import { type Actor, type CommandMetadata, eventMetadata } from '../src/domain/messages.ts';
import { classify, isKnownLong, normaliseCommand, RULES_VERSION } from '../src/domain/risk/index.ts';
import type { ExecutionOutcome } from '../src/domain/session/commands.ts';
import { decide, type SessionCommandInput } from '../src/domain/session/decide.ts';
import { SESSION_EVENT_VERSION, type Outcome, type SessionEvent, type TurnFailureReason } from '../src/domain/session/events.ts';
import { evolve, initialSessionState, type SessionState } from '../src/domain/session/state.ts';
import { sessionStream } from '../src/domain/session/stream.ts';
import type { Rng } from './prng.ts';

export interface GeneratedSession {
  readonly id: string;
  readonly stream: string;
  /** One batch per command, in order: what one append of that command writes. */
  readonly appends: readonly (readonly NewEvent[])[];
  readonly events: number;
  readonly scenario: Scenario;
}

/** How a session ends, chosen so every outcome and every blocker the rules derive appears across a population. */
export type Scenario =
  | 'success'
  | 'approval_expired'
  | 'approval_pending_at_end'
  | 'approval_denied'
  | 'execution_timed_out'
  | 'retry_cap'
  | 'turn_model_refusal'
  | 'turn_model_empty'
  | 'text_classifier_overreach'
  | 'text_user_abandoned'
  | 'text_missing_knowledge'
  | 'text_missing_capability'
  | 'text_tool_error'
  | 'summary_only'
  | 'unknown_cause'
  | 'still_active';

const SCENARIO_WEIGHTS: Record<Scenario, number> = {
  success: 44,
  approval_expired: 5,
  approval_pending_at_end: 4,
  approval_denied: 5,
  execution_timed_out: 4,
  retry_cap: 3,
  turn_model_refusal: 3,
  turn_model_empty: 3,
  text_classifier_overreach: 4,
  text_user_abandoned: 3,
  text_missing_knowledge: 3,
  text_missing_capability: 3,
  text_tool_error: 3,
  summary_only: 3,
  unknown_cause: 3,
  still_active: 5,
};

/** The agent's last words per scenario: what the text rules of src/domain/session/blocker.ts read. */
const LAST_WORDS: Partial<Record<Scenario, readonly string[]>> = {
  text_classifier_overreach: ['The classifier flagged it as config_mutation, so I stopped before changing anything.'],
  text_user_abandoned: ['The operator has moved on; closing this session.', 'You abandoned the task, so I am closing the session.'],
  text_missing_knowledge: ["I couldn't find any runbook for this backup job.", 'There is no local knowledge about this host yet.'],
  text_missing_capability: ['There is no tool for editing the Proxmox firewall, so I cannot finish.', 'Resizing the pool is not yet supported from here.'],
  text_tool_error: ['The last command failed with exit code 2, I stopped there.', 'rsync hit permission denied on the target directory.'],
};

const SUCCESS_WORDS = ['Done: the timer runs again and the last backup completed.', 'Fixed. The container has its memory back and the service is up.'];
const NEUTRAL_WORDS = ['I made some progress and wrote down what I saw.', 'Here is where things stand.'];
const GOALS = [
  'Fix the rclone backup so it completes instead of OOM-killing',
  'Find out why jellyfin transcoding stalls at night',
  'Move the media share to the new pool without downtime',
  'Renew the certificates on the reverse proxy',
  'Free disk space on host:strong before it fills up',
  'Check why pihole stopped answering DNS',
];
const TARGETS = ['host:strong', 'host:weak', 'lxc:rclone', 'lxc:jellyfin', 'lxc:pihole', 'lxc:nextcloud', 'vm:zimaos', 'lxc:proxy'];
const READ_COMMANDS = ['systemctl status rclone-backup.timer', 'df -h /mnt/media', 'journalctl -u rclone-backup --since today', 'free -m', 'ls -la /mnt/media', 'cat /etc/fstab'];
const MUTATION_COMMANDS = ['chown :10000 /mnt/media', 'systemctl restart rclone-backup', 'chmod 775 /mnt/media/incoming', 'pct set 132 --memory 4096'];
const DESTRUCTIVE_COMMANDS = ['rm -rf /var/cache/jellyfin/transcodes', 'zfs destroy tank/old-media'];
const LONG_COMMANDS = ['apt upgrade -y', 'rclone sync /mnt/media remote:media'];
const READ_TOOLS = ['get_entity', 'list_entities', 'search_knowledge', 'get_execution_status', 'classify_command', 'http_get', 'get_health_summary', 'get_relations'];

const OPERATORS: readonly Actor[] = [{ role: 'operator', id: 'alice' }, { role: 'operator', id: 'bob' }];
const AGENT: Actor = { role: 'agent', id: 'nomos' };
const EXECUTOR: Actor = { role: 'system', id: 'executor' };
const APPROVAL_TTL_MS = 15 * 60_000;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

interface Classified {
  readonly verdict: ReturnType<typeof classify>;
  readonly normalised: string;
  readonly knownLong: boolean;
}

/** The classifier is pure and its shell parser slow: each of the few commands is parsed once. */
const classified = new Map<string, Classified>();
function classifyOnce(command: string): Classified {
  let found = classified.get(command);
  if (found === undefined) classified.set(command, (found = { verdict: classify(command), normalised: normaliseCommand(command), knownLong: isKnownLong(command) }));
  return found;
}

/** 5 to 100 tool calls, most sessions near the low end and a long tail, as agent sessions go. */
function toolCallBudget(rng: Rng): number {
  if (rng.chance(0.03)) return rng.int(40, 100);
  return Math.min(100, 5 + Math.floor(-Math.log(1 - rng.next()) * 4));
}

/** The request_execution command the command layer builds for run(target, command): verdict, hashes, known_long. */
function requestExecution(execution_id: string, target: string, command: string): Extract<SessionCommandInput, { type: 'request_execution' }> {
  const { verdict, normalised, knownLong } = classifyOnce(command);
  return {
    type: 'request_execution',
    execution_id,
    target,
    command,
    verdict,
    rules_version: String(RULES_VERSION),
    command_hash: sha256(`${target}\n${normalised}`),
    binding: sha256(JSON.stringify({ command, target, rules: RULES_VERSION })),
    known_long: knownLong,
    approval_ttl_ms: APPROVAL_TTL_MS,
  };
}

/** Plays one session through the decider, command by command. */
class SessionPlay {
  readonly id: string;
  private state: SessionState = initialSessionState;
  private readonly appends: NewEvent[][] = [];
  private clock: number;
  private toolCallsLeft: number;
  private readonly operator: Actor;

  constructor(
    private readonly rng: Rng,
    startsAt: number,
    private readonly scenario: Scenario,
  ) {
    this.id = rng.uuid();
    this.clock = startsAt;
    this.toolCallsLeft = toolCallBudget(rng);
    this.operator = rng.pick(OPERATORS);
  }

  result(): GeneratedSession {
    const events = this.appends.reduce((n, batch) => n + batch.length, 0);
    return { id: this.id, stream: sessionStream(this.id), appends: this.appends, events, scenario: this.scenario };
  }

  /** Decides the command on the folded state and records its events as one append, as handleCommand does. */
  command(command: SessionCommandInput, actor: Actor, advanceMs = this.rng.int(200, 20_000)): SessionEvent[] {
    this.clock += advanceMs;
    // agent:nomos is the server's own agent loop, which works for the session's owner (the operator who started it).
    const meta: CommandMetadata = { commandId: this.rng.uuid(), actor, ...(actor === AGENT && { actsForOwner: true }), correlationId: '', causationId: '', now: new Date(this.clock).toISOString() };
    const withIds: CommandMetadata = { ...meta, correlationId: meta.commandId, causationId: meta.commandId };
    const events = decide(command, this.state, withIds);
    this.state = events.reduce(evolve, this.state);
    if (events.length > 0) {
      const metadata = eventMetadata(withIds, SESSION_EVENT_VERSION);
      this.appends.push(events.map((e) => ({ type: e.type, data: e.data, metadata })));
    }
    return events;
  }

  /** A tool call as the agent records it: requested, the tool's own commands, then its result. */
  tool(name: string, args: Record<string, unknown>, body: () => { result?: unknown; error?: string }): void {
    const tool_call_id = `call_${this.rng.uuid().replaceAll('-', '').slice(0, 24)}`;
    this.command({ type: 'record_tool_call_requested', tool_call_id, name, args }, AGENT, this.rng.int(500, 8_000));
    const outcome = body();
    this.command({ type: 'record_tool_call_completed', tool_call_id, ...outcome }, AGENT, this.rng.int(50, 3_000));
    this.toolCallsLeft--;
  }

  play(): GeneratedSession {
    this.command({ type: 'start_session', session_id: this.id }, this.operator, 0);
    const turns = Math.max(1, Math.min(5, Math.round(this.toolCallsLeft / this.rng.int(4, 12))));
    for (let turn = 0; turn < turns; turn++) this.turn(turn, turn === turns - 1);
    // Some operators come back after the end: the session reopens, and ends again.
    if (this.scenario !== 'still_active' && this.rng.chance(0.04)) {
      this.command({ type: 'post_user_message', text: 'One more thing: check that it survives a reboot.' }, this.operator, this.rng.int(60_000, 3_600_000));
      const turnId = this.rng.uuid();
      this.command({ type: 'start_turn', turn_id: turnId, trigger: 'user_message' }, this.operator, 100);
      this.tool('run', { target: 'lxc:rclone', command: 'systemctl is-enabled rclone-backup.timer' }, () => this.run('lxc:rclone', 'systemctl is-enabled rclone-backup.timer', 'granted'));
      this.tool('complete_task', { outcome: 'success', summary: 'enabled at boot' }, () => this.complete('success', 'It is enabled at boot.'));
      this.command({ type: 'record_assistant_message', text: 'It is enabled and will survive a reboot.' }, AGENT);
      this.command({ type: 'end_turn', turn_id: turnId, status: 'completed', model_calls: 2 }, AGENT, 10);
    }
    if (this.rng.chance(0.003)) this.command({ type: 'delete_session', reason: 'test session' }, this.operator);
    return this.result();
  }

  private turn(index: number, last: boolean): void {
    const goal = this.rng.pick(GOALS);
    this.command({ type: 'post_user_message', text: index === 0 ? `${goal}, please.` : 'Go on, and tell me what you find.' }, this.operator, index === 0 ? 0 : this.rng.int(30_000, 900_000));
    const turnId = this.rng.uuid();
    this.command({ type: 'start_turn', turn_id: turnId, trigger: 'user_message' }, this.operator, 50);
    if (index === 0 || this.rng.chance(0.1)) {
      this.tool('set_goal', { goal }, () => ({ result: this.goal(goal) }));
      this.tool('propose_plan', { steps: [] }, () => ({ result: this.plan() }));
    }
    if (this.rng.chance(0.05)) this.command({ type: 'open_assent', minutes: 30 }, this.operator);
    const calls = last ? Math.max(1, this.toolCallsLeft) : Math.max(1, Math.floor(this.toolCallsLeft / 2));
    for (let i = 0; i < calls; i++) this.someTool(last && i === calls - 1);
    if (!last && this.rng.chance(0.08)) {
      // The operator stopped this turn between tool calls.
      this.command({ type: 'cancel_turn' }, this.operator, 1_000);
      this.command({ type: 'fail_turn', turn_id: turnId, reason: 'cancelled', detail: 'the turn was cancelled between tool calls' }, AGENT, 100);
      this.command({ type: 'end_turn', turn_id: turnId, status: 'cancelled', model_calls: calls }, AGENT, 10);
      return;
    }
    if (last) return this.lastTurnEnd(turnId, calls);
    this.command({ type: 'record_assistant_message', text: 'Here is what I found so far; shall I go on?' }, AGENT);
    this.command({ type: 'end_turn', turn_id: turnId, status: 'completed', model_calls: calls + 1 }, AGENT, 10);
  }

  /** The scenario decides how the last turn ends: the task's outcome, the agent's last words, a failed turn. */
  private lastTurnEnd(turnId: string, calls: number): void {
    const s = this.scenario;
    if (s === 'still_active') {
      this.command({ type: 'record_assistant_message', text: 'Waiting for the backup window before I continue.' }, AGENT);
      this.command({ type: 'end_turn', turn_id: turnId, status: 'completed', model_calls: calls + 1 }, AGENT, 10);
      return;
    }
    const outcome: Outcome = s === 'success' ? 'success' : this.rng.pick(['partial', 'failed'] as const);
    const summary = s === 'summary_only' ? 'Stopped: no tool to edit the firewall rules.' : s === 'success' ? 'Done.' : 'Stopped here.';
    this.tool('complete_task', { outcome, summary }, () => this.complete(outcome, summary));
    if (s === 'turn_model_refusal' || s === 'turn_model_empty') {
      const reason: TurnFailureReason = s === 'turn_model_refusal' ? 'model_refusal' : 'model_empty_response';
      this.command({ type: 'fail_turn', turn_id: turnId, reason, detail: 'the model gave no usable answer after 3 retries' }, AGENT);
      this.command({ type: 'end_turn', turn_id: turnId, status: 'failed', model_calls: calls + 4 }, AGENT, 10);
      return;
    }
    const words = s === 'success' ? SUCCESS_WORDS : (LAST_WORDS[s] ?? NEUTRAL_WORDS);
    this.command({ type: 'record_assistant_message', text: this.rng.pick(words) }, AGENT);
    this.command({ type: 'end_turn', turn_id: turnId, status: 'completed', model_calls: calls + 2 }, AGENT, 10);
  }

  private goal(goal: string): unknown {
    const set = this.command({ type: 'set_goal', goal }, AGENT).find((e) => e.type === 'GoalSet');
    return { goal_id: set?.type === 'GoalSet' ? set.data.goal_id : null, title: goal };
  }

  private plan(): unknown {
    const steps = Array.from({ length: this.rng.int(2, 6) }, (_, i) => ({
      title: `step ${i + 1}: ${this.rng.pick(['inspect', 'fix', 'verify', 'document'])}`,
      ...(this.rng.chance(0.4) && { command: this.rng.pick(READ_COMMANDS), target: this.rng.pick(TARGETS) }),
    }));
    this.command({ type: 'propose_plan', steps }, AGENT);
    return { generation: this.state.planGeneration, steps: steps.length };
  }

  private complete(outcome: Outcome, summary: string): { result: unknown } {
    this.command({ type: 'complete_task', outcome, summary }, AGENT);
    return { result: { outcome, status: this.state.status } };
  }

  /** One tool call of the turn; the last one of the session carries the scenario's blocking facts. */
  private someTool(decisive: boolean): void {
    const target = this.rng.pick(TARGETS);
    if (decisive) return this.decisiveTool(target);
    const kind = this.rng.weighted({ run: 35, plan_step: 15, read: 45, long: 2, big: 3 });
    switch (kind) {
      case 'run': {
        const command = this.rng.chance(0.7) ? this.rng.pick(READ_COMMANDS) : this.rng.pick(MUTATION_COMMANDS);
        return this.tool('run', { target, command }, () => this.run(target, command, 'granted'));
      }
      case 'plan_step':
        return this.tool('update_plan_step', {}, () => this.advancePlan());
      case 'long':
        return this.tool('run', { target, command: this.rng.pick(LONG_COMMANDS) }, () => this.alreadyRunning(target));
      case 'big':
        // A result over 4 KiB: the decider cuts it and records its original size.
        return this.tool('run', { target, command: 'journalctl -b' }, () => ({ result: { exit_code: 0, stdout: 'Nov 29 kernel: ok\n'.repeat(400) } }));
      case 'read':
        return this.tool(this.rng.pick(READ_TOOLS), { slug: target, query: 'rclone backup' }, () =>
          this.rng.chance(0.05) ? { error: 'entity not found' } : { result: { slug: target, state: 'running', notes: 'x'.repeat(this.rng.int(20, 600)) } },
        );
    }
  }

  private decisiveTool(target: string): void {
    const command = this.rng.pick([...MUTATION_COMMANDS, ...DESTRUCTIVE_COMMANDS]);
    switch (this.scenario) {
      case 'approval_expired':
        return this.tool('run', { target, command }, () => this.run(target, command, 'expired'));
      case 'approval_pending_at_end':
        return this.tool('run', { target, command }, () => this.run(target, command, 'pending'));
      case 'approval_denied':
        return this.tool('run', { target, command }, () => this.run(target, command, 'denied'));
      case 'execution_timed_out':
        return this.tool('run', { target, command: 'rclone check /mnt/media remote:media' }, () => this.run(target, 'rclone check /mnt/media remote:media', 'granted', 'timed_out'));
      case 'retry_cap': {
        const failing = 'mount /mnt/media';
        for (let i = 0; i < 3; i++) this.tool('run', { target, command: failing }, () => this.run(target, failing, 'assent', 'failed'));
        return this.tool('run', { target, command: failing }, () => this.run(target, failing, 'assent'));
      }
      default:
        return this.tool('run', { target, command: 'systemctl status rclone-backup.timer' }, () => this.run(target, 'systemctl status rclone-backup.timer', 'granted'));
    }
  }

  /**
   * run(target, command) as ExecutionService plays it: request (classified), then per the verdict an approval
   * that is granted, denied, expired or left pending; a granted or runnable one starts and finishes.
   */
  private run(target: string, command: string, approval: 'granted' | 'denied' | 'expired' | 'pending' | 'assent', ending?: ExecutionOutcome['kind']): { result?: unknown; error?: string } {
    const execution_id = this.rng.uuid();
    if (approval === 'assent' && this.state.assentUntil === null) this.command({ type: 'open_assent', minutes: 60 }, this.operator, 1_000);
    const requested = this.command(requestExecution(execution_id, target, command), AGENT, this.rng.int(20, 500));
    const refused = requested.find((e) => e.type === 'ExecutionRefused');
    if (refused?.type === 'ExecutionRefused') return { result: { execution_id, status: 'refused', reason: refused.data.reason } };
    const asked = requested.find((e) => e.type === 'ApprovalRequested');
    if (asked?.type === 'ApprovalRequested') {
      const approval_id = asked.data.approval_id;
      if (approval === 'pending') return { result: { execution_id, status: 'approval_required', approval_id } };
      if (approval === 'denied') {
        this.command({ type: 'deny', approval_id, reason: 'not during the backup window' }, this.operator, this.rng.int(30_000, 600_000));
        return { result: { execution_id, status: 'approval_required', approval_id } };
      }
      if (approval === 'expired') {
        this.command({ type: 'expire_approval', approval_id }, EXECUTOR, APPROVAL_TTL_MS + this.rng.int(1_000, 5_000));
        return { result: { execution_id, status: 'approval_required', approval_id } };
      }
      this.command({ type: 'approve', approval_id }, this.operator, this.rng.int(10_000, 300_000));
    }
    this.command({ type: 'start_execution', execution_id, binding: this.state.executions.get(execution_id)?.binding ?? '' }, EXECUTOR, 50);
    const outcome = this.outcome(ending ?? (this.rng.chance(0.12) ? 'failed' : 'succeeded'));
    this.command({ type: 'finish_execution', execution_id, outcome }, EXECUTOR, outcome.duration_ms);
    if (outcome.kind === 'succeeded') return { result: { execution_id, status: 'succeeded', exit_code: 0, stdout: outcome.stdout_tail } };
    return { error: outcome.kind === 'timed_out' ? 'timed out at the hard limit' : `failed with exit code ${outcome.kind === 'failed' ? outcome.exit_code : ''}` };
  }

  /** A long command answered pending; the same one again is refused as already running, then the first ends. */
  private alreadyRunning(target: string): { result: unknown } {
    const command = this.rng.pick(LONG_COMMANDS);
    const first = this.rng.uuid();
    const requested = this.command(requestExecution(first, target, command), AGENT, 100);
    const asked = requested.find((e) => e.type === 'ApprovalRequested');
    if (asked?.type === 'ApprovalRequested') this.command({ type: 'approve', approval_id: asked.data.approval_id }, this.operator, this.rng.int(10_000, 60_000));
    this.command({ type: 'start_execution', execution_id: first, binding: this.state.executions.get(first)?.binding ?? '' }, EXECUTOR, 50);
    this.command(requestExecution(this.rng.uuid(), target, command), AGENT, 30_000);
    this.command({ type: 'finish_execution', execution_id: first, outcome: this.outcome('succeeded') }, EXECUTOR, 120_000);
    return { result: { execution_id: first, status: 'pending' } };
  }

  private outcome(kind: ExecutionOutcome['kind']): ExecutionOutcome {
    const duration_ms = this.rng.int(40, 20_000);
    const stdout_tail = 'rclone-backup.timer: active (waiting)\n'.repeat(this.rng.int(1, 20));
    switch (kind) {
      case 'succeeded':
        return { kind, stdout_tail, stderr_tail: '', duration_ms };
      case 'failed':
        return { kind, exit_code: this.rng.int(1, 4), signal: null, error: null, stdout_tail, stderr_tail: 'mount: /mnt/media: special device does not exist', duration_ms };
      case 'timed_out':
        return { kind, limit_ms: 1_800_000, stdout_tail, stderr_tail: '', duration_ms: 1_800_000 };
    }
  }

  /** Moves the current plan along one valid step: the first unfinished step runs, then finishes. */
  private advancePlan(): { result?: unknown; error?: string } {
    const plan = this.state.steps.filter((s) => s.generation === this.state.planGeneration);
    const step = plan.find((s) => s.status === 'pending' || s.status === 'running');
    if (step === undefined) return { error: 'no step left to update' };
    const status = step.status === 'pending' ? 'running' : this.rng.pick(['done', 'done', 'done', 'skipped', 'failed'] as const);
    this.command({ type: 'update_plan_step', seq: step.seq, status }, AGENT);
    return { result: { seq: step.seq, status } };
  }
}

/** An endless, deterministic stream of sessions, each starting a little after the previous one within [from, to). */
export function* sessions(rng: Rng, window: { from: number; to: number; count: number }): Generator<GeneratedSession> {
  const spacing = (window.to - window.from) / Math.max(1, window.count);
  for (let i = 0; ; i++) {
    const startsAt = window.from + Math.floor(i * spacing) + rng.int(0, Math.max(0, Math.floor(spacing) - 1));
    yield new SessionPlay(rng, startsAt, rng.weighted(SCENARIO_WEIGHTS)).play();
  }
}
