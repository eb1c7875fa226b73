// The model's context fitted to a token budget, deterministically: the same events and budget always give the
// same messages, the cut points chosen from them alone. It starts from buildModelMessages and, only while the
// estimate is over the budget: (b) elides the oldest tool results, outside the latest turn, to one-line stubs;
// (c) folds the oldest turns into one digest built from the events; (d) elides the latest turn's results too.
// Once it shortens anything, a memo right after the system message carries the session's goals and current
// plan whole (and the digest, once turns are folded); the system message itself never changes.
import type { SessionEvent, SessionEventOf } from '../domain/session/events.ts';
import type { LlmMessage, LlmToolDef } from '../ports/llm.ts';
import { buildSourcedMessages } from './context.ts';
import { digestLines } from './context-digest.ts';
import { sessionStateLines } from './context-state.ts';
import { elidedResultStub } from './context-stub.ts';
import { countMessageTokens, countPromptTokens, countTextTokens } from './tokens.ts';

export interface ContextBudget {
  /** The most the prompt may cost: the model's window less what its answer needs. */
  readonly tokens: number;
  /** The tool definitions sent with the prompt: they are paid for on every call. */
  readonly tools: readonly LlmToolDef[];
}

export interface ContextFit {
  readonly messages: LlmMessage[];
  /** countPromptTokens of the messages with the budget's tools. */
  readonly estimatedTokens: number;
  readonly budgetTokens: number;
  /** Tool results shown as a stub that names get_tool_result. */
  readonly elidedResults: number;
  /** Turns replaced by the digest. */
  readonly foldedTurns: number;
  /** false when even the latest turn, all its results elided, is over the budget: not to be sent. */
  readonly fits: boolean;
}

/** The digest's share of the budget, and its ceiling: the newest lines are kept. */
const DIGEST_SHARE = 0.1;
const MAX_DIGEST_TOKENS = 1_500;

export function fitModelMessages(system: string, events: readonly SessionEvent[], budget: ContextBudget): ContextFit {
  const sourced = buildSourcedMessages(system, events);
  const whole = sourced.map((m) => m.message);
  const wholeTokens = countPromptTokens(whole, budget.tools);
  if (wholeTokens <= budget.tokens) return { messages: whole, estimatedTokens: wholeTokens, budgetTokens: budget.tokens, elidedResults: 0, foldedTurns: 0, fits: true };

  const messages = [...whole];
  const sizes = messages.map(countMessageTokens);
  const fixed = countPromptTokens([], budget.tools) + (sizes[0] ?? 0);
  const state = sessionStateLines(events);
  const calls = recordedCalls(events);
  const starts = turnStarts(whole);
  const latest = starts.at(-1) ?? whole.length;
  const elided = new Set<number>();

  // What is sent: the system message, the memo, then messages[from…].
  let memo = memoMessage(state, null);
  let from = 1;
  const estimate = () => fixed + (memo === null ? 0 : countMessageTokens(memo)) + sizes.slice(from).reduce((a, b) => a + b, 0);
  let total = estimate();

  const elide = (start: number, end: number) => {
    for (let i = start; i < end && total > budget.tokens; i++) {
      const message = messages[i];
      const call = message?.role === 'tool' ? calls.get(message.toolCallId) : undefined;
      if (call?.completed === undefined) continue; // not a recorded result (an answer to a dangling call)
      const stub: LlmMessage = { role: 'tool', toolCallId: call.requested.tool_call_id, content: elidedResultStub(call.requested, call.completed) };
      const size = countMessageTokens(stub);
      const before = sizes[i] ?? 0;
      if (size >= before) continue;
      messages[i] = stub;
      sizes[i] = size;
      total += size - before;
      elided.add(i);
    }
  };

  // (b) The oldest results first, never the latest turn's.
  elide(1, latest);

  // (c) The fewest oldest turns whose digest makes it fit; if none does, the fold that leaves the least.
  let foldedTurns = 0;
  if (total > budget.tokens) {
    const digestTokens = Math.min(MAX_DIGEST_TOKENS, Math.floor(budget.tokens * DIGEST_SHARE));
    let least = { memo, from, turns: 0, total };
    for (const [turns, cut] of starts.entries()) {
      if (turns === 0) continue;
      const digest = boundedDigest(digestLines(events, sourced[cut]?.event ?? events.length), digestTokens);
      memo = memoMessage(state, { turns, ...digest });
      from = cut;
      total = estimate();
      if (total < least.total) least = { memo, from, turns, total };
      if (total <= budget.tokens) break;
    }
    ({ memo, from, turns: foldedTurns, total } = least);
  }

  // (d) The latest turn alone is too big: its results too, oldest first.
  elide(latest, messages.length);

  const fitted = [...messages.slice(0, 1), ...(memo === null ? [] : [memo]), ...messages.slice(from)];
  const estimatedTokens = countPromptTokens(fitted, budget.tools);
  return {
    messages: fitted,
    estimatedTokens,
    budgetTokens: budget.tokens,
    elidedResults: [...elided].filter((i) => i >= from).length,
    foldedTurns,
    fits: estimatedTokens <= budget.tokens,
  };
}

/**
 * Where each turn starts: the first message after the system message, and each run of user messages (an operator's
 * message with what happened meanwhile, or the note a turn the agent starts by itself begins with). A cut there
 * never separates a tool call from its result: buildModelMessages answers every open call before a user message.
 */
function turnStarts(messages: readonly LlmMessage[]): number[] {
  const starts: number[] = [];
  for (let i = 1; i < messages.length; i++) {
    if (i === 1 || (messages[i]?.role === 'user' && messages[i - 1]?.role !== 'user')) starts.push(i);
  }
  return starts;
}

interface RecordedCall {
  readonly requested: SessionEventOf<'ToolCallRequested'>['data'];
  completed?: SessionEventOf<'ToolCallCompleted'>['data'];
}

function recordedCalls(events: readonly SessionEvent[]): Map<string, RecordedCall> {
  const calls = new Map<string, RecordedCall>();
  for (const event of events) {
    if (event.type === 'ToolCallRequested' && !calls.has(event.data.tool_call_id)) calls.set(event.data.tool_call_id, { requested: event.data });
    if (event.type === 'ToolCallCompleted') {
      const call = calls.get(event.data.tool_call_id);
      if (call) call.completed = event.data;
    }
  }
  return calls;
}

/** The newest lines that fit in `tokens`, and how many older ones were left out. */
function boundedDigest(lines: readonly string[], tokens: number): { lines: string[]; omitted: number } {
  let spent = 0;
  let first = lines.length;
  while (first > 0) {
    // A line costs its text and its newline.
    const cost = countTextTokens(lines[first - 1] ?? '') + 1;
    if (spent + cost > tokens) break;
    spent += cost;
    first--;
  }
  return { lines: lines.slice(first), omitted: first };
}

function memoMessage(state: readonly string[] | null, digest: { turns: number; lines: readonly string[]; omitted: number } | null): LlmMessage | null {
  const parts: string[] = [];
  if (state !== null) parts.push(['[nomos] The session so far is shortened to fit the context window; its goals and current plan:', ...state].join('\n'));
  if (digest !== null) {
    const omitted = digest.omitted > 0 ? `; ${digest.omitted} older lines left out` : '';
    const turns = digest.turns === 1 ? 'turn' : `${digest.turns} turns`;
    const header = `[nomos] What happened in the first ${turns}, folded away (from the session's records, oldest first${omitted}; get_tool_result reads a recorded result again):`;
    parts.push([header, ...digest.lines].join('\n'));
  }
  return parts.length === 0 ? null : { role: 'user', content: parts.join('\n\n') };
}
