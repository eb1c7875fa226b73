// The agent: runs a turn of a session against the model — rebuild the context from the session's events, fitted
// to the model's window (src/agent/context-fit.ts), stream a completion, record what the call cost, run the tools
// it asks for (each recorded as tool-call events, with the result it was shown), and end the turn with its final
// text. Bounded: 15 model calls a turn, empty or refusal-looking answers retried up to 3 times, providers'
// failures retried by kind (src/agent/provider-retry.ts); a cancel stops it between tool calls.
// A turn runs only while this server holds the session's turn lease (src/agent/turn-lease.ts): one loop per
// session across every server sharing the database.
import { RuleViolation } from '../domain/messages.ts';
import { parseSessionEvent, type SessionEvent, type TurnFailureReason } from '../domain/session/events.ts';
import { sessionStream } from '../domain/session/stream.ts';
import type { CommandContext, CommandDeps } from '../commands/context.ts';
import { runSessionCommand } from '../commands/session.ts';
import { type ContextFit, fitModelMessages } from './context-fit.ts';
import { type LlmClient, type LlmCompletion, LlmProviderError, type LlmToolDef } from '../ports/llm.ts';
import { type ProviderFailure, nextTry } from './provider-retry.ts';
import { countPromptTokens, countTextTokens } from './tokens.ts';
import { type ContextWindow, tightenedBudget } from './window.ts';
import { unusableAnswer } from './refusal.ts';
import { type ToolServices, callTool, recordToolCall, toolDefinitions } from './tools.ts';
import { type HeldTurn, type TurnLeases, TurnRunning } from './turn-lease.ts';

export const MAX_MODEL_CALLS = 15;
export const MAX_UNUSABLE_RETRIES = 3;
/** How long a new turn waits for a lease holder that has not started its turn (it is only looking). */
const LOOKING_HOLDER_WAIT_MS = 2_000;

export interface AgentOptions {
  readonly systemPrompt: string;
  /** A short description of the fleet for the system prompt, read at the start of each turn. */
  readonly fleetSnapshot: () => Promise<string>;
  readonly publishToken: (sessionId: string, text: string) => void;
  /** Resolves once the deltas published so far have reached every server's clients (TurnBus.delivered). */
  readonly tokensDelivered: () => Promise<void>;
  readonly log: (message: string, error?: unknown) => void;
  /** The model's window and the budget prompts are fitted to. */
  readonly window: ContextWindow;
  /** Waits between tries of a failed call (tests shorten it); the provider's Retry-After is honoured within it. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Where the agent says a provider failed: the server's log at warn level (a retry) or error (the turn fails). */
export interface AgentLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** What GET /agent reports: the model, its window and what the fixed part of every prompt costs. */
export interface AgentDescription {
  readonly model: string;
  readonly providerHost: string;
  readonly window: ContextWindow;
  readonly systemPromptTokens: number;
  readonly toolsTokens: number;
}

/** A turn ends failed with this reason: its detail says why in the provider's words where it has them. */
class TurnFailure extends Error {
  constructor(
    readonly reason: TurnFailureReason,
    readonly detail: string,
  ) {
    super(detail);
  }
}

type Trigger = 'user_message' | 'continue' | 'execution_finished';

/** A turn of this process, and how to stop it: a cancel, the lease lost, or this server shutting down. */
interface LocalTurn {
  readonly held: HeldTurn;
  readonly shutdown: AbortController;
  readonly cancel: AbortController;
  readonly done: Promise<void>;
}

export class Agent {
  /** The turns this process runs (their leases say so to every server). */
  private readonly running = new Map<string, LocalTurn>();
  private logger: AgentLogger = {
    warn: (fields, message) => console.error(`nomos agent: ${message}`, fields),
    error: (fields, message) => console.error(`nomos agent: ${message}`, fields),
  };

  constructor(
    private readonly deps: CommandDeps,
    private readonly llm: LlmClient,
    private readonly tools: ToolServices,
    private readonly leases: TurnLeases,
    private readonly options: AgentOptions,
  ) {}

  /**
   * Takes the session's turn lease (TurnRunning, a 409, when a turn runs on any server), runs `before` (the
   * user's message, posted only once the turn is ours), starts the turn and runs it in the background; resolves
   * once TurnStarted is appended (so a stream opened from before it sees the whole turn). A turn left open by a
   * server that died (its lease lapsed) is ended first.
   */
  async startTurn<T = undefined>(sessionId: string, trigger: Trigger, ctx: CommandContext, before?: () => Promise<T>): Promise<{ turnId: string; position: number; before: T | undefined }> {
    const turnId = this.deps.newId();
    const held = await this.acquireLease(sessionId, turnId);
    let started: { position: number };
    let result: T | undefined;
    try {
      await this.endStaleTurn(sessionId, ctx);
      result = await before?.();
      started = await runSessionCommand(this.deps, sessionId, { type: 'start_turn', turn_id: turnId, trigger }, ctx);
    } catch (error) {
      await held.release().catch((e: unknown) => this.options.log(`releasing the turn lease of session ${sessionId}`, e));
      throw error;
    }
    const shutdown = new AbortController();
    const cancel = new AbortController();
    const signal = AbortSignal.any([held.signal, shutdown.signal, cancel.signal]);
    const done = this.runTurn(sessionId, turnId, ctx, signal, () => (cancel.signal.aborted ? 'cancelled' : shutdown.signal.aborted ? 'shutdown' : held.reason()))
      .catch((error: unknown) => this.options.log(`turn ${turnId} of session ${sessionId}`, error))
      .finally(async () => {
        this.running.delete(sessionId);
        await held.release().catch((error: unknown) => this.options.log(`releasing the turn lease of session ${sessionId}`, error));
      });
    this.running.set(sessionId, { held, shutdown, cancel, done });
    return { turnId, position: started.position, before: result };
  }

  /**
   * Asks the running turn to stop (an event records it, and the lease tells its holder on whichever server);
   * the loop stops before its next tool call or model call.
   */
  async cancel(sessionId: string, ctx: CommandContext): Promise<{ position: number }> {
    const handled = await runSessionCommand(this.deps, sessionId, { type: 'cancel_turn' }, ctx);
    await this.leases.requestCancel(sessionId);
    this.running.get(sessionId)?.cancel.abort();
    return { position: handled.position };
  }

  /** The server's log, once it has one: provider failures are told there. */
  logTo(logger: AgentLogger): void {
    this.logger = logger;
  }

  async describe(): Promise<AgentDescription> {
    const system = `${this.options.systemPrompt}\n\n${await this.options.fleetSnapshot()}`;
    return {
      model: this.llm.model,
      providerHost: this.llm.host,
      window: this.options.window,
      systemPromptTokens: countPromptTokens([{ role: 'system', content: system }], []),
      toolsTokens: countTextTokens(JSON.stringify(toolDefinitions())),
    };
  }

  /** Resolves once this process's turn of the session (if any) has ended. */
  async idle(sessionId: string): Promise<void> {
    await this.running.get(sessionId)?.done;
  }

  /** Stops this process's turns (each records that the server stopped) and releases their leases. */
  async close(): Promise<void> {
    for (const turn of this.running.values()) turn.shutdown.abort();
    await Promise.allSettled([...this.running.values()].map((t) => t.done));
  }

  private async runTurn(sessionId: string, turnId: string, ctx: CommandContext, signal: AbortSignal, stopReason: () => 'lost' | 'cancelled' | 'shutdown' | null): Promise<void> {
    // The turn is the owner's (their message started it): the agent writes and runs as the owner may.
    const agentCtx: CommandContext = { ...ctx, actor: { role: 'agent', id: 'nomos' }, actsForOwner: true };
    const tools = toolDefinitions();
    const system = `${this.options.systemPrompt}\n\n${await this.options.fleetSnapshot()}`;
    let calls = 0;
    /** The stream version the latest model call was given: an execution's end after it is news to the agent. */
    let seenVersion = -1;
    const end = async (status: 'completed' | 'failed' | 'cancelled', failure?: { reason: TurnFailureReason; detail: string }) => {
      try {
        if (failure) await runSessionCommand(this.deps, sessionId, { type: 'fail_turn', turn_id: turnId, ...failure }, agentCtx);
        await runSessionCommand(this.deps, sessionId, { type: 'end_turn', turn_id: turnId, status, model_calls: calls, seen_version: seenVersion }, agentCtx);
      } catch (error) {
        // The lease lapsed and another server ended this turn as interrupted: nothing is left to record.
        if (!(error instanceof RuleViolation && stopReason() === 'lost')) throw error;
      }
    };
    const stopped = () => {
      const why = stopReason();
      if (why === 'shutdown') return end('failed', { reason: 'provider_error', detail: 'the turn was interrupted (the server stopped)' });
      if (why === 'lost') return end('failed', { reason: 'provider_error', detail: 'the turn was interrupted (its server lost the turn lease)' });
      return end('cancelled', { reason: 'cancelled', detail: 'the turn was cancelled' });
    };

    /** Tightened for the rest of the turn when the provider says a prompt did not fit. */
    const budget = { tokens: this.options.window.budgetTokens };
    while (calls < MAX_MODEL_CALLS) {
      const events = await this.events(sessionId);
      if (cancelRequested(events, turnId)) return end('cancelled', { reason: 'cancelled', detail: 'the turn was cancelled' });
      if (signal.aborted) return stopped();
      seenVersion = events.length - 1;
      let completion: LlmCompletion | null = null;
      let unusable: ReturnType<typeof unusableAnswer> = null;
      for (let attempt = 0; attempt <= MAX_UNUSABLE_RETRIES; attempt++) {
        calls++;
        try {
          completion = await this.completeRecorded({ sessionId, turnId, system, events, tools, budget, signal, ctx: agentCtx });
        } catch (error) {
          if (signal.aborted) return stopped();
          if (error instanceof TurnFailure) return end('failed', { reason: error.reason, detail: error.detail });
          const detail = error instanceof Error ? error.message : String(error);
          return end('failed', { reason: 'provider_error', detail });
        }
        unusable = completion.toolCalls.length > 0 || completion.finishReason === 'length' ? null : unusableAnswer(completion.content, completion.refusal);
        if (unusable === null || calls >= MAX_MODEL_CALLS) break;
      }
      if (completion === null) return end('failed', { reason: 'provider_error', detail: 'no completion' });
      if (unusable !== null) return end('failed', { reason: unusable, detail: `the model gave no usable answer after ${MAX_UNUSABLE_RETRIES} retries` });

      // Cut at the provider's output limit: its tool calls may be cut too, so none is run; what it wrote is kept.
      if (completion.finishReason === 'length') {
        if (completion.content.trim() !== '') await runSessionCommand(this.deps, sessionId, { type: 'record_assistant_message', text: completion.content }, agentCtx);
        const cut = completion.toolCalls.length > 0 ? ` (${completion.toolCalls.length} tool call(s) in it were not run)` : '';
        return end('failed', { reason: 'output_limit', detail: `the model's answer was cut at its output limit (finish_reason length)${cut}; ask it to go on, or raise the model's output limit` });
      }
      if (completion.toolCalls.length === 0) {
        await runSessionCommand(this.deps, sessionId, { type: 'record_assistant_message', text: completion.content }, agentCtx);
        return end('completed');
      }
      for (const call of completion.toolCalls) {
        if (cancelRequested(await this.events(sessionId), turnId)) return end('cancelled', { reason: 'cancelled', detail: 'the turn was cancelled between tool calls' });
        if (signal.aborted) return stopped();
        await this.runTool(sessionId, call, agentCtx);
      }
    }
    return end('failed', { reason: 'iteration_limit', detail: `stopped after ${MAX_MODEL_CALLS} model calls in one turn` });
  }

  private async runTool(sessionId: string, call: { id: string; name: string; arguments: string }, ctx: CommandContext): Promise<void> {
    // Recorded with the arguments as far as they parse; what is recorded is what the model is shown next.
    await recordToolCall(this.deps, { sessionId, toolCallId: call.id || this.deps.newId(), name: call.name, args: argumentsOf(call.arguments), ctx }, async () => {
      const { result, error } = await callTool(call.name, call.arguments, { sessionId, ctx }, this.tools);
      return { result, error };
    });
  }

  /**
   * One model call, fitted to the budget, tried again as its failure allows (provider-retry.ts), every try
   * recorded as a ModelCallRecorded event. A prompt the budget says will not fit is never sent: the turn fails.
   */
  private async completeRecorded(call: {
    sessionId: string;
    turnId: string;
    system: string;
    events: readonly SessionEvent[];
    tools: readonly LlmToolDef[];
    budget: { tokens: number };
    signal: AbortSignal;
    ctx: CommandContext;
  }): Promise<LlmCompletion> {
    const { sessionId, signal } = call;
    const onToken = (text: string) => this.options.publishToken(sessionId, text);
    const failures: ProviderFailure[] = [];
    for (let attempt = 1; ; attempt++) {
      const fit = fitModelMessages(call.system, call.events, { tokens: call.budget.tokens, tools: call.tools });
      if (!fit.fits) {
        throw new TurnFailure('context_exceeded', `the context does not fit: the latest turn alone needs about ${fit.estimatedTokens} tokens, the budget is ${fit.budgetTokens} (window ${this.options.window.windowTokens}, NOMOS_CONTEXT_TOKENS)`);
      }
      try {
        const completion = await this.llm.complete({ messages: fit.messages, tools: call.tools, signal }, onToken);
        await this.recordCall(call, attempt, fit, completion, null);
        return completion;
      } catch (error) {
        if (!(error instanceof LlmProviderError) || signal.aborted) throw error;
        await this.recordCall(call, attempt, fit, null, error);
        failures.push({ kind: error.kind, status: error.status, contextExceeded: error.contextExceeded, retryAfterMs: error.retryAfterMs });
        const next = nextTry(failures);
        const fields = { session_id: sessionId, provider: this.llm.host, model: this.llm.model, status: error.status, code: error.providerCode, attempt };
        if (next === null) {
          this.logger.error(fields, `model provider ${this.llm.host} failed; the turn fails: ${error.message}`);
          throw new TurnFailure(error.contextExceeded ? 'context_exceeded' : 'provider_error', `${error.message}${attempt > 1 ? ` (after ${attempt} tries)` : ''}`);
        }
        this.logger.warn({ ...fields, retry_in_ms: next.waitMs }, `model provider ${this.llm.host} failed; trying again: ${error.message}`);
        if (error.contextExceeded) call.budget.tokens = tightenedBudget(call.budget.tokens, fit.estimatedTokens, error.message, this.options.window.reserveTokens);
        await (this.options.sleep ?? sleep)(next.waitMs, signal);
        if (signal.aborted) throw error;
      } finally {
        // What is recorded next (the text, the turn's end) must not overtake the deltas on their way to other servers.
        await this.options.tokensDelivered();
      }
    }
  }

  /** The call's record; a turn its server no longer holds (ended elsewhere) records nothing more. */
  private async recordCall(
    call: { sessionId: string; turnId: string; ctx: CommandContext },
    attempt: number,
    fit: ContextFit,
    completion: LlmCompletion | null,
    error: LlmProviderError | null,
  ): Promise<void> {
    const timing = completion?.timing ?? error?.details.timing ?? { durationMs: 0, firstTokenMs: null };
    const usage = completion?.usage ?? null;
    const record = {
      call_id: this.deps.newId(),
      turn_id: call.turnId,
      attempt,
      model: completion?.model ?? this.llm.model,
      provider_host: this.llm.host,
      input_tokens: usage?.inputTokens ?? null,
      output_tokens: usage?.outputTokens ?? null,
      cached_input_tokens: usage?.cachedInputTokens ?? null,
      estimated_input_tokens: fit.estimatedTokens,
      duration_ms: Math.max(0, Math.round(timing.durationMs)),
      first_token_ms: timing.firstTokenMs === null ? null : Math.max(0, Math.round(timing.firstTokenMs)),
      finish_reason: completion?.finishReason ?? null,
      context: { budget_tokens: fit.budgetTokens, estimated_tokens: fit.estimatedTokens, messages: fit.messages.length, elided_results: fit.elidedResults, folded_turns: fit.foldedTurns },
      error: error === null ? null : { kind: error.kind, status: error.status, code: error.providerCode, message: error.message.slice(0, 2_000) },
    };
    try {
      await runSessionCommand(this.deps, call.sessionId, { type: 'record_model_call', call: record }, call.ctx);
    } catch (e) {
      if (!(e instanceof RuleViolation)) throw e;
      this.options.log(`recording a model call of session ${call.sessionId}`, e);
    }
  }

  private async events(sessionId: string): Promise<SessionEvent[]> {
    const { events } = await this.deps.store.readStream(sessionStream(sessionId));
    return events.map((e) => parseSessionEvent(e.type, e.data));
  }

  /**
   * The session's lease, also from a holder whose turn has ended in the log and is only releasing it. A holder
   * whose turn is not in the log yet is taking the lease to look (the reactor checking whether the agent must carry
   * on, which it mostly need not): it is waited for, briefly, rather than answered with a 409.
   */
  private async acquireLease(sessionId: string, turnId: string): Promise<HeldTurn> {
    const deadline = Date.now() + LOOKING_HOLDER_WAIT_MS;
    for (;;) {
      try {
        return await this.leases.acquire(sessionId, turnId);
      } catch (error) {
        if (!(error instanceof TurnRunning)) throw error;
        const events = await this.events(sessionId);
        if (events.some((e) => e.type === 'TurnEnded' && e.data.turn_id === error.turnId)) {
          return (await this.leases.takeOverEnded(sessionId, error.turnId, turnId)) ?? this.leases.acquire(sessionId, turnId);
        }
        const started = events.some((e) => e.type === 'TurnStarted' && e.data.turn_id === error.turnId);
        if (started || Date.now() >= deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
  }

  /** Called holding the session's lease: a turn still open in the log belongs to a server that is gone. */
  private async endStaleTurn(sessionId: string, ctx: CommandContext): Promise<void> {
    const events = await this.events(sessionId);
    let open: string | null = null;
    for (const e of events) {
      if (e.type === 'TurnStarted') open = e.data.turn_id;
      if (e.type === 'TurnEnded' && e.data.turn_id === open) open = null;
    }
    if (open === null) return;
    // Its server stopped or died (its lease lapsed): close it so the session can go on.
    const system = { ...ctx, actor: { role: 'system' as const, id: 'agent' } };
    await runSessionCommand(this.deps, sessionId, { type: 'fail_turn', turn_id: open, reason: 'provider_error', detail: 'the turn was interrupted (the server stopped)' }, system);
    await runSessionCommand(this.deps, sessionId, { type: 'end_turn', turn_id: open, status: 'failed', model_calls: 0 }, system);
  }
}

function argumentsOf(raw: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { raw: raw.slice(0, 2_000) };
  } catch {
    return { raw: raw.slice(0, 2_000) };
  }
}

function cancelRequested(events: readonly SessionEvent[], turnId: string): boolean {
  return events.some((e) => e.type === 'TurnCancelRequested' && e.data.turn_id === turnId);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
