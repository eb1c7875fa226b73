// Execution orchestration: run(target, command) for a session, end to end — classify, resolve the target,
// decide (run now, wait for an approval, or refuse), claim it, start it on the executor, wait a short while,
// and record how it ended — every step an event in the session's stream; approvals and assent windows too.
// What runs here is in the live registry (src/execution/live.ts); the periodic sweeps are src/execution/sweeps.ts;
// what follows a success in the inventory is src/execution/reactions.ts.
import { createHash } from 'node:crypto';
import { type Actor, NotFound, RuleViolation } from '../domain/messages.ts';
import { EVERY_TARGET, judge, type Policy, type PolicyDecision } from '../domain/policy/index.ts';
import { isKnownLong, RULES_VERSION } from '../domain/risk/index.ts';
import { retryIdentity } from '../domain/session/retry-identity.ts';
import { quoteValue } from '../domain/risk/quote.ts';
import type { ExecutionOutcome } from '../domain/session/commands.ts';
import type { RefusalReason, SessionEvent, ShadowDecision, Verdict } from '../domain/session/events.ts';
import { hostAddresses } from '../projections/entities.ts';
import { type ApprovalView, getApproval, getExecution } from '../projections/executions.ts';
import { pinHostKey, resolveTarget, TargetUnreachable } from '../commands/entity.ts';
import type { CommandContext, CommandDeps } from '../commands/context.ts';
import { readPolicy } from '../commands/policy.ts';
import { keepJudgement } from '../commands/policy-what-if.ts';
import { runSessionCommand } from '../commands/session.ts';
import type { CommandClassifier } from '../ports/classifier.ts';
import { type ExecHandle, type ExecResult, type ExecTarget, type Executor, ExecutorConnectError, HostKeyMismatchError } from '../ports/executor.ts';
import type { LiveExecutions } from './live.ts';
import { followInventory } from './reactions.ts';

export interface ExecutionSettings {
  /** How long run waits for a command before answering pending. */
  readonly shortWaitMs: number;
  /** When the remote process is ended and the execution recorded as timed out. */
  readonly hardLimitMs: number;
  readonly approvalTtlMs: number;
  /** A running command silent this long is probed for uninterruptible sleep (hung). */
  readonly hungAfterMs: number;
  /** How often the server running an execution renews its claim (with the output so far). */
  readonly heartbeatMs: number;
  /** A running execution whose server has not renewed its claim for this long is recorded lost. */
  readonly lostAfterMs: number;
  /** An approved execution its server has not started after this long is started by another (or refused, lost). */
  readonly approvedGraceMs: number;
}

export const DEFAULT_EXECUTION_SETTINGS: ExecutionSettings = {
  shortWaitMs: 30_000,
  hardLimitMs: 30 * 60_000,
  approvalTtlMs: 15 * 60_000,
  hungAfterMs: 10_000,
  heartbeatMs: 2_000,
  lostAfterMs: 20_000,
  approvedGraceMs: 5_000,
};

export type RunStatus = 'succeeded' | 'failed' | 'timed_out' | 'pending' | 'approval_required' | 'refused';

export interface RunReply {
  execution_id: string;
  target: string;
  status: RunStatus;
  verdict: Verdict;
  /** Position of the last event this reply reflects (min_position for reads). */
  position: number;
  exit_code?: number | null;
  stdout?: string;
  stderr?: string;
  approval_id?: string;
  expires_at?: string;
  reason?: RefusalReason;
  detail?: string;
  hint?: string;
}

/** A verdict with the policy's decision on it, the policy's reasons, and a shadow candidate's decision if one runs. */
export interface Judged {
  readonly verdict: Verdict;
  readonly reasons: string[];
  readonly shadow?: ShadowDecision;
}

export interface InspectRow {
  target: string;
  execution_id: string | null;
  status: RunStatus;
  exit_code: number | null;
  output: string;
  errors: string;
}

export const SYSTEM = { role: 'system', id: 'executor' } as const;
const NO_KEY = 'no SSH key is configured (set NOMOS_SSH_KEY to a private key file)';
const APPROVAL_LOOKUP_WAIT_MS = 3_000;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const sleep = (ms: number) => new Promise<null>((resolve) => setTimeout(() => resolve(null), ms));

/** Exactly what will run: the command, where (address, user, container), and under which classifier rules. */
export function bindingOf(command: string, target: ExecTarget): string {
  const where = { kind: target.kind, host: target.host.slug, address: target.host.address, port: target.host.port, user: target.host.user, pve_id: target.kind === 'host' ? null : target.pveId };
  return sha256(JSON.stringify({ command, where, rules: RULES_VERSION }));
}

/** What the retry cap counts: the same final command (quoting, spacing and wrappers aside) on the same final target. */
export function commandHashOf(target: ExecTarget, command: string, hostsByAddress?: ReadonlyMap<string, string>): string {
  const sentTo = { kind: target.kind, host: target.host.slug, pveId: target.kind === 'host' ? null : target.pveId };
  return sha256(retryIdentity(sentTo, command, hostsByAddress));
}

export class ExecutionService {
  private readonly settling = new Set<Promise<unknown>>();
  private closing = false;

  constructor(
    private readonly deps: CommandDeps,
    private readonly executor: Executor | null,
    readonly settings: ExecutionSettings,
    readonly live: LiveExecutions,
    private readonly log: (message: string, error?: unknown) => void = () => undefined,
    private readonly classifier: CommandClassifier = { classify: (command) => Promise.resolve(judge({ command }).verdict), judge: (request) => Promise.resolve(judge(request)) },
  ) {}

  /**
   * The verdict run would apply to the command on the target, within the classifier's time bound, with the
   * decision of the policy in force (and of a candidate in shadow) and why (classify_command, POST /classify,
   * POST /policy/check). Without a target, only the rules that hold on every target are consulted.
   */
  async judge(command: string, target: string = EVERY_TARGET, options: { keep?: boolean } = {}): Promise<Judged> {
    const { versions, shadow } = await readPolicy(this.deps);
    const current = versions.at(-1) ?? null;
    const policies: (Policy | null)[] = shadow === null ? [current?.policy ?? null] : [current?.policy ?? null, shadow.policy];
    const judged = await this.classifier.judge({ command, target, policies, parts: options.keep === true });
    // Kept for the policy what-if, beside the request: a failure to keep it costs only a later judgement.
    if (options.keep === true && judged.parts !== undefined) {
      const kept = keepJudgement(this.deps.readDb, command, { verdict: judged.verdict, parts: judged.parts }).catch((error: unknown) => this.log('keeping a command judgement', error));
      this.settling.add(kept);
      void kept.finally(() => this.settling.delete(kept));
    }
    const [decided, shadowed] = judged.decisions as [PolicyDecision, PolicyDecision | undefined];
    const verdict: Verdict = { ...judged.verdict, decision: decided.decision, rule_id: decided.rule_id, policy_version: current?.version ?? 0 };
    return {
      verdict,
      reasons: decided.reasons,
      ...(shadow !== null && shadowed !== undefined && { shadow: { shadow: shadow.shadow, decision: shadowed.decision, rule_id: shadowed.rule_id } }),
    };
  }

  /** The verdict run would apply, with the policy's decision where rules hold on every target (classify_command, POST /classify). */
  async classify(command: string, target?: string): Promise<Verdict> {
    return (await this.judge(command, target)).verdict;
  }

  async run(sessionId: string, input: { target: string; command: string }, ctx: CommandContext): Promise<RunReply> {
    // A target nothing can reach (no key configured, no address known) is refused before anyone is asked to approve it.
    const [{ verdict, shadow }, resolved] = await Promise.all([this.judge(input.command, input.target, { keep: true }), this.resolve(input.target)]);
    const target = resolved.target;
    const unreachable = this.executor ? resolved.unreachable : NO_KEY;
    const execution_id = this.deps.newId();
    const known_long = isKnownLong(input.command);
    const handled = await runSessionCommand(this.deps, sessionId, {
      type: 'request_execution',
      execution_id,
      target: input.target,
      command: input.command,
      verdict,
      rules_version: String(RULES_VERSION),
      // An ssh hop to a registered host names that host as the final target.
      command_hash: target ? commandHashOf(target, input.command, /\bssh\b/.test(input.command) ? await hostAddresses(this.deps.readDb) : undefined) : sha256(retryIdentity({ kind: 'host', host: input.target, pveId: null }, input.command)),
      binding: target ? bindingOf(input.command, target) : sha256(JSON.stringify({ command: input.command, where: input.target, rules: RULES_VERSION })),
      known_long,
      approval_ttl_ms: this.settings.approvalTtlMs,
      ...(unreachable !== undefined && { unreachable }),
      ...(shadow !== undefined && { shadow }),
    }, ctx);
    const base = { execution_id, target: input.target, verdict, position: handled.position };
    const refused = find(handled.events, 'ExecutionRefused');
    if (refused) return { ...base, status: 'refused', reason: refused.data.reason, detail: refused.data.detail };
    const decided =
      verdict.rule_id === 'classifier'
        ? verdict.risk_class
        : verdict.rule_id === 'floor'
          ? `${verdict.risk_class} (the policy allows it, but never what the classifier judges destructive or cannot see)`
          : `rule ${verdict.rule_id} of the operator's policy (version ${verdict.policy_version})`;
    const approval = find(handled.events, 'ApprovalRequested');
    if (approval) {
      return {
        ...base,
        status: 'approval_required',
        approval_id: approval.data.approval_id,
        expires_at: approval.data.expires_at,
        hint: `${decided}: waiting for an operator (POST /approvals/${approval.data.approval_id}/approve). Do not resubmit it; ask the operator or carry on with something else.`,
      };
    }
    if (target === null) throw new Error(`execution ${execution_id}: an unreachable target was not refused`);
    return this.start(sessionId, execution_id, input.command, target, input.target, verdict, known_long, ctx);
  }

  /** The target as it resolves, or why nothing can reach it. */
  private async resolve(slug: string): Promise<{ target: ExecTarget | null; unreachable?: string }> {
    try {
      return { target: await resolveTarget(this.deps.store, slug) };
    } catch (error) {
      if (!(error instanceof TargetUnreachable)) throw error;
      return { target: null, unreachable: error.message };
    }
  }

  /**
   * The same facts about one path on many targets at once (mount, df, ls -la, stat), as read-only
   * executions run side by side, answered as one table instead of a run per fact per target.
   */
  async inspectPath(sessionId: string, path: string, targets: readonly string[], ctx: CommandContext): Promise<{ path: string; rows: InspectRow[] }> {
    const p = quoteValue(path);
    const command = `mount | grep -F -- ${p}; df -h ${p}; ls -la ${p}; stat ${p}`;
    const rows = await Promise.all(
      targets.map(async (target): Promise<InspectRow> => {
        try {
          const reply = await this.run(sessionId, { target, command }, ctx);
          return { target, execution_id: reply.execution_id, status: reply.status, exit_code: reply.exit_code ?? null, output: reply.stdout ?? '', errors: reply.stderr ?? reply.detail ?? '' };
        } catch (error) {
          return { target, execution_id: null, status: 'refused', exit_code: null, output: '', errors: error instanceof Error ? error.message : String(error) };
        }
      }),
    );
    return { path, rows };
  }

  /** Approves and, if granted, runs the execution exactly once (a second approval is refused by the decider). */
  async approve(approvalId: string, ctx: CommandContext): Promise<{ approval_id: string; status: 'granted'; position: number; execution: RunReply }> {
    const approval = await this.findApproval(approvalId);
    const handled = await runSessionCommand(this.deps, approval.session_id, { type: 'approve', approval_id: approvalId }, ctx);
    if (find(handled.events, 'ApprovalExpired')) {
      throw new RuleViolation('approval_expired', `Approval ${approvalId} expired at ${approval.expires_at}; nothing ran. The agent may request it again.`);
    }
    const execution = handled.after.executions.get(approval.execution_id);
    const row = await getExecution(this.deps.readDb, approval.execution_id);
    if (!execution || !row) throw new Error(`approval ${approvalId} names execution ${approval.execution_id}, which is unknown`);
    const target = await resolveTarget(this.deps.store, execution.target);
    const reply = await this.start(approval.session_id, execution.executionId, execution.command, target, execution.target, row.verdict, row.known_long, ctx);
    return { approval_id: approvalId, status: 'granted', position: handled.position, execution: reply };
  }

  async deny(approvalId: string, reason: string, ctx: CommandContext): Promise<{ approval_id: string; status: 'denied'; position: number }> {
    const approval = await this.findApproval(approvalId);
    const handled = await runSessionCommand(this.deps, approval.session_id, { type: 'deny', approval_id: approvalId, reason }, ctx);
    return { approval_id: approvalId, status: 'denied', position: handled.position };
  }

  async openAssent(sessionId: string, minutes: number, grantee: Actor | null, ctx: CommandContext): Promise<{ session_id: string; until: string; for: Actor | null; position: number }> {
    const handled = await runSessionCommand(this.deps, sessionId, { type: 'open_assent', minutes, ...(grantee !== null && { for: grantee }) }, ctx);
    const opened = find(handled.events, 'AssentOpened');
    return { session_id: sessionId, until: opened?.data.until ?? '', for: opened?.data.for ?? null, position: handled.position };
  }

  /**
   * Starts an execution approved on a server that stopped before starting it (called by the sweep): exactly
   * once, whichever servers try, as the claim and the stream's expected version see to it.
   */
  async startApproved(sessionId: string, executionId: string): Promise<RunReply | null> {
    const row = await getExecution(this.deps.readDb, executionId);
    if (!row) return null;
    const target = await resolveTarget(this.deps.store, row.target);
    try {
      return await this.start(sessionId, executionId, row.command, target, row.target, row.verdict, row.known_long, { actor: SYSTEM });
    } catch (error) {
      if (error instanceof RuleViolation) return null; // another server started it first
      throw error;
    }
  }

  /** The execution as recorded, plus what a running one printed so far and whether it looks hung. */
  async status(executionId: string): Promise<Record<string, unknown> | null> {
    const row = await getExecution(this.deps.readDb, executionId);
    const local = this.live.local(executionId);
    // Running on another server (or here, before the read model caught up): its claim row says how it goes.
    const claim = local ? null : await this.live.view(executionId);
    if (!row && !local && !claim) return null;
    const base: Record<string, unknown> = row ? { execution_id: executionId, ...row } : { execution_id: executionId, session_id: local?.sessionId, target: local?.target, command: local?.command };
    let running: Record<string, unknown>;
    let idle: number;
    if (local) {
      const { stdout, stderr } = local.handle.output();
      idle = local.handle.idleMs();
      const state = await this.live.stateOf(local);
      running = { ...base, status: state, stdout_so_far: stdout, stderr_so_far: stderr, idle_ms: idle, running_ms: Date.now() - local.startedAt, server: this.live.holder };
    } else if (claim && claim.state !== 'starting' && (row === null || row.status === 'running') && claim.beat_age_ms < this.settings.lostAfterMs) {
      idle = claim.idle_ms + claim.beat_age_ms;
      running = { ...base, status: claim.state, stdout_so_far: claim.stdout_so_far, stderr_so_far: claim.stderr_so_far, idle_ms: idle, running_ms: claim.running_ms + claim.beat_age_ms, server: claim.holder };
    } else {
      return base;
    }
    if (running.status !== 'hung') return running;
    return {
      ...running,
      advice: `No output for ${Math.round(idle / 1000)} s and the process is in uninterruptible sleep (state D): it is hung in the kernel, not failed. Do not retry it. Inspect instead: ps -eo pid,stat,wchan:32,cmd | grep ' D'; cat /proc/PID/stack; strace -f -p PID; lsof on the path it touches.`,
    };
  }

  /**
   * An approval's session, from the read model. An operator may act on an approval id the moment run
   * answered it, before the projection caught up: wait a little for it rather than say it does not exist.
   */
  private async findApproval(approvalId: string): Promise<ApprovalView> {
    const deadline = Date.now() + APPROVAL_LOOKUP_WAIT_MS;
    for (;;) {
      const approval = await getApproval(this.deps.readDb, approvalId);
      if (approval) return approval;
      if (Date.now() >= deadline) throw new NotFound('approval', `no approval ${approvalId}`, 'approval_not_found');
      await sleep(20);
    }
  }

  /** Waits until every execution started by this service has been recorded as finished (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.settling.size > 0) await Promise.allSettled([...this.settling]);
  }

  /**
   * Stops recording outcomes. Remote commands are NOT killed: stopping the server must not cut an apt
   * upgrade in half. What was still running stays `running` in the history until its claim lapses and the
   * sweep of a server still up (or back) records it as lost (its outcome unknown).
   */
  async close(): Promise<void> {
    this.closing = true;
    await this.live.close();
  }

  private async start(sessionId: string, executionId: string, command: string, target: ExecTarget, slug: string, verdict: Verdict, knownLong: boolean, ctx: CommandContext): Promise<RunReply> {
    const base = { execution_id: executionId, target: slug, verdict };
    // Claimed before its start is recorded: a server that dies from here on leaves a claim that stops beating.
    if (!(await this.live.claim(executionId, sessionId))) throw new RuleViolation('not_runnable', `Execution ${executionId} is being started by another server.`);
    let started: Awaited<ReturnType<typeof runSessionCommand>>;
    try {
      started = await runSessionCommand(this.deps, sessionId, { type: 'start_execution', execution_id: executionId, binding: bindingOf(command, target) }, ctx);
    } catch (error) {
      await this.live.release(executionId);
      throw error;
    }
    const mismatch = find(started.events, 'ExecutionRefused');
    if (mismatch) {
      await this.live.release(executionId);
      return { ...base, position: started.position, status: 'refused', reason: mismatch.data.reason, detail: mismatch.data.detail };
    }

    let handle: ExecHandle;
    try {
      if (!this.executor) throw new ExecutorConnectError(target.host.slug, NO_KEY);
      handle = await this.executor.start(target, command, { hardLimitMs: this.settings.hardLimitMs });
    } catch (error) {
      const reason: RefusalReason = error instanceof HostKeyMismatchError ? 'host_key_mismatch' : 'unreachable';
      const detail = error instanceof Error ? error.message : String(error);
      const refused = await runSessionCommand(this.deps, sessionId, { type: 'refuse_execution', execution_id: executionId, reason, detail }, ctx).finally(() => this.live.release(executionId));
      return { ...base, position: refused.position, status: 'refused', reason, detail };
    }
    if (target.host.hostKey === null) {
      // First connection to this host: pin the key it presented, so another key is refused from now on.
      await pinHostKey(this.deps, target.host.slug, handle.hostKey, { ...ctx, actor: SYSTEM }).catch((error: unknown) => this.log(`pinning ${target.host.slug}`, error));
    }
    const startedAt = Date.now();
    this.live.attach(executionId, { handle, sessionId, target: slug, command, startedAt });
    const finished = handle.result
      .then((result) => this.finish(sessionId, executionId, command, result, target, slug, verdict, startedAt, ctx))
      .catch((error: unknown) => {
        this.log(`recording the end of execution ${executionId}`, error);
        return null;
      })
      .finally(() => {
        this.settling.delete(finished);
      });
    this.settling.add(finished);
    const pending: RunReply = {
      ...base,
      position: started.position,
      status: 'pending',
      hint: `Still running. Poll get_execution_status (GET /executions/${executionId}); a silent command in state D is hung — inspect it, do not retry.`,
    };
    if (knownLong) return pending;
    const outcome = await Promise.race([finished, sleep(this.settings.shortWaitMs)]);
    return outcome ?? pending;
  }

  private async finish(sessionId: string, executionId: string, command: string, result: ExecResult, target: ExecTarget, slug: string, verdict: Verdict, startedAt: number, ctx: CommandContext): Promise<RunReply | null> {
    // After close the connection going away ends the handle: that is not how the command ended.
    if (this.closing) return null;
    const durationMs = Date.now() - startedAt;
    const tails = { stdout_tail: result.stdoutTail, stderr_tail: result.stderrTail, duration_ms: durationMs };
    const outcome: ExecutionOutcome = result.timedOut
      ? { kind: 'timed_out', limit_ms: this.settings.hardLimitMs, ...tails }
      : result.exitCode === 0
        ? { kind: 'succeeded', ...tails }
        : { kind: 'failed', exit_code: result.exitCode, signal: result.signal, error: null, ...tails };
    const handled = await runSessionCommand(this.deps, sessionId, { type: 'finish_execution', execution_id: executionId, outcome }, { ...ctx, actor: SYSTEM }).finally(() => this.live.release(executionId));
    if (outcome.kind === 'succeeded' && target.kind === 'host') await followInventory(this.deps, target, command, { ...ctx, actor: SYSTEM }, this.log);
    return {
      execution_id: executionId,
      target: slug,
      verdict,
      position: handled.position,
      status: outcome.kind,
      exit_code: result.exitCode,
      stdout: result.stdoutTail,
      stderr: result.stderrTail,
    };
  }
}

function find<K extends SessionEvent['type']>(events: readonly SessionEvent[], type: K): Extract<SessionEvent, { type: K }> | undefined {
  return events.find((e): e is Extract<SessionEvent, { type: K }> => e.type === type);
}
