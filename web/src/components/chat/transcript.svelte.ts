// What the chat page shows of a session, folded from its stored events (the history) and then from the live
// stream's messages: user messages, and each turn's tool calls, approvals, streamed and final text, failures.
import type { ChatStreamMessage, StoredEventView } from '../../lib/types.ts';

export interface ToolCallItem {
  id: string;
  name: string;
  args: Record<string, unknown>;
  result: unknown;
  error: string | null;
  done: boolean;
}

export interface ApprovalItem {
  approval_id: string;
  execution_id: string;
  command: string;
  target: string;
  risk_class: string;
  expires_at: string;
  status: string;
  reason: string | null;
}

export interface Failure {
  reason: string;
  detail: string;
}

export interface TurnItem {
  kind: 'turn';
  key: string;
  calls: ToolCallItem[];
  approvals: ApprovalItem[];
  /** Token deltas of the model call under way; the stored text replaces them. */
  draft: string;
  text: string | null;
  failures: Failure[];
  /** null while it runs (or, for approvals asked outside a turn, never known). */
  status: 'completed' | 'failed' | 'cancelled' | null;
}

export interface UserItem {
  kind: 'user';
  key: string;
  text: string;
  /** Shown before the server took it: dropped again if the server refuses the message. */
  tentative: boolean;
}

export type Item = UserItem | TurnItem;

/** A stored event as the chat stream would send it, plus what only the history holds (user messages, decisions). */
export type Input =
  | ChatStreamMessage
  | { type: 'user'; data: { text: string } }
  | { type: 'turn_started'; data: Record<string, unknown> }
  | { type: 'approval_decided'; data: { approval_id: string; status: string; reason: string | null } };

const DECISIONS: Record<string, string> = { ApprovalGranted: 'granted', ApprovalDenied: 'denied', ApprovalExpired: 'expired', ApprovalCancelled: 'cancelled' };
const STREAMED: Record<string, ChatStreamMessage['type']> = {
  ToolCallRequested: 'tool_use',
  ToolCallCompleted: 'tool_result',
  ApprovalRequested: 'approval_required',
  AssistantMessageRecorded: 'text',
  TurnFailed: 'error',
  TurnEnded: 'done',
};

/** The chat input a stored event stands for (mirrors the server's toChatMessage), or null when not shown. */
export function fromEvent(sessionId: string, event: StoredEventView): Input | null {
  const d = event.data;
  if (event.type === 'UserMessagePosted') return { type: 'user', data: { text: typeof d.text === 'string' ? d.text : '' } };
  if (event.type === 'TurnStarted') return { type: 'turn_started', data: d };
  const decision = DECISIONS[event.type];
  if (decision) return { type: 'approval_decided', data: { approval_id: String(d.approval_id), status: decision, reason: typeof d.reason === 'string' ? d.reason : null } };
  const type = STREAMED[event.type];
  return type ? { type, session_id: sessionId, data: d } : null;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

export class Transcript {
  items = $state<Item[]>([]);
  /** Whether a turn runs, as far as the messages tell (a started turn with no done yet). */
  running = $state(false);
  #serial = 0;

  #key(): string {
    this.#serial += 1;
    return `i${this.#serial}`;
  }

  /** The open turn: the last item when it is a turn not yet done; a new one otherwise. */
  #turn(): TurnItem {
    const last = this.items.at(-1);
    if (last?.kind === 'turn' && last.status === null) return last;
    this.items.push({ kind: 'turn', key: this.#key(), calls: [], approvals: [], draft: '', text: null, failures: [], status: null });
    return this.items.at(-1) as TurnItem;
  }

  addUser(text: string, tentative: boolean): UserItem {
    this.items.push({ kind: 'user', key: this.#key(), text, tentative });
    return this.items.at(-1) as UserItem;
  }

  drop(item: Item): void {
    this.items = this.items.filter((i) => i.key !== item.key);
  }

  approvals(): ApprovalItem[] {
    return this.items.flatMap((i) => (i.kind === 'turn' ? i.approvals : []));
  }

  apply(input: Input): void {
    const d = input.data as Record<string, unknown>;
    switch (input.type) {
      case 'user':
      case 'user_message': {
        // The message this page sent shows already; the stored one confirms it. Another client's is added (the
        // live stream sends those; this page's own POST /chat stream starts after its message).
        const text = str(d.text);
        const pending = this.items.find((i): i is UserItem => i.kind === 'user' && i.tentative && i.text === text);
        if (pending) pending.tentative = false;
        else this.addUser(text, false);
        return;
      }
      case 'turn_started':
        this.#turn();
        this.running = true;
        return;
      case 'token':
        this.#turn().draft += str(d.text);
        this.running = true;
        return;
      case 'tool_use': {
        const turn = this.#turn();
        // Text streamed before a tool call is the model thinking aloud: not stored, so not kept.
        turn.draft = '';
        turn.calls.push({ id: str(d.tool_call_id), name: str(d.name), args: (d.args ?? {}) as Record<string, unknown>, result: undefined, error: null, done: false });
        this.running = true;
        return;
      }
      case 'tool_result': {
        const call = this.items.flatMap((i) => (i.kind === 'turn' ? i.calls : [])).find((c) => c.id === d.tool_call_id);
        if (!call) return;
        call.result = d.result;
        call.error = typeof d.error === 'string' ? d.error : null;
        call.done = true;
        return;
      }
      case 'approval_required':
        // Asked for by hand (POST …/commands) as well as by the agent: it need not belong to a running turn.
        this.#turn().approvals.push({
          approval_id: str(d.approval_id),
          execution_id: str(d.execution_id),
          command: str(d.command),
          target: str(d.target),
          risk_class: str(d.risk_class),
          expires_at: str(d.expires_at),
          status: 'pending',
          reason: null,
        });
        return;
      case 'approval_decided':
        this.decided(input.data.approval_id, input.data.status, input.data.reason);
        return;
      case 'text': {
        const turn = this.#turn();
        turn.text = str(d.text);
        turn.draft = '';
        return;
      }
      case 'error': {
        // The text streamed for an answer that failed is not an answer: the error card takes its place.
        const turn = this.#turn();
        turn.draft = '';
        turn.failures.push({ reason: str(d.reason), detail: str(d.detail) });
        return;
      }
      case 'done':
        this.#end(d.status === 'failed' || d.status === 'cancelled' ? d.status : 'completed');
        return;
    }
  }

  decided(approvalId: string, status: string, reason: string | null = null): void {
    for (const a of this.approvals()) {
      if (a.approval_id !== approvalId || a.status === status) continue;
      a.status = status;
      if (reason !== null) a.reason = reason;
    }
  }

  #end(status: 'completed' | 'failed' | 'cancelled'): void {
    const turn = this.#turn();
    turn.status = status;
    turn.draft = '';
    this.running = false;
    for (const call of turn.calls) call.done = true;
    // An empty answer must not look like a blank bubble: say what happened.
    if (status === 'failed' && turn.failures.length === 0) turn.failures.push({ reason: 'turn_failed', detail: 'the turn failed without saying why' });
    if (status === 'completed' && turn.text === null && turn.failures.length === 0) {
      turn.failures.push({ reason: 'no_answer', detail: 'the turn ended without an answer from the model' });
    }
  }
}
