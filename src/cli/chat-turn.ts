// Prints a turn as it streams: tokens as they come after `nomos> `, one line per tool call, its result drawn
// from the result's data, approvals the operator is asked for once the turn is done, and the turn's end.
import { drawToolResult, short } from './chat-draw.ts';
import type { StreamMessage } from './chat-sse.ts';

export interface ApprovalAsk {
  approval_id: string;
  session_id: string;
  execution_id: string;
  command: string;
  target: string;
  risk_class: string;
  /** A position at which the read models hold the approval (its request's, or a later one). */
  position: number;
}

export class TurnPrinter {
  /** The highest stored position shown: a stream resumed after it repeats nothing. */
  lastId: number | null = null;
  private approvals: ApprovalAsk[] = [];
  private speaking = false;
  /** The tokens shown since the last stored message: a text they did not spell out in full is printed whole. */
  private spoken = '';
  /** tool_call_id → tool name: a result is drawn by what kind of tool returned it. */
  private readonly names = new Map<string, string>();

  constructor(private readonly out: (text: string) => void) {}

  show(m: StreamMessage): void {
    if (m.id !== null) this.lastId = Math.max(this.lastId ?? m.id, m.id);
    const d = m.data;
    const spoken = this.spoken;
    if (m.type !== 'token') {
      this.endLine();
      this.spoken = '';
    }
    switch (m.type) {
      case 'token':
        if (!this.speaking) this.out('nomos> ');
        this.speaking = true;
        this.spoken += String(d.text);
        this.out(String(d.text));
        break;
      case 'tool_use':
        this.names.set(String(d.tool_call_id), String(d.name));
        this.out(`  → ${String(d.name)} ${short(d.args)}\n`);
        break;
      case 'tool_result': {
        const lines = drawToolResult(this.names.get(String(d.tool_call_id)), d.result, typeof d.error === 'string' ? d.error : null);
        for (const line of lines) this.out(`  ${line}\n`);
        break;
      }
      case 'approval_required':
        this.approvals.push({
          approval_id: String(d.approval_id),
          session_id: m.session_id,
          execution_id: String(d.execution_id),
          command: String(d.command),
          target: String(d.target),
          risk_class: String(d.risk_class),
          position: m.id ?? this.lastId ?? 0,
        });
        this.out(`  ⏸ approval needed: ${String(d.command)} on ${String(d.target)} (${String(d.risk_class)})\n`);
        break;
      case 'text':
        // Streamed as tokens, unless this stream began after they went by (a replay, a late follow).
        if (spoken.trim() !== String(d.text).trim()) this.out(`nomos> ${String(d.text)}\n`);
        break;
      case 'error':
        this.out(`  ! ${String(d.reason)}: ${String(d.detail)}\n`);
        break;
      case 'done':
        this.out(`  (turn ${String(d.status)}; session ${m.session_id})\n`);
        break;
      default:
        break; // a message type a newer server sends: not this client's to draw
    }
  }

  /** Ends a line of streamed tokens, so what comes next starts on its own line. */
  endLine(): void {
    if (!this.speaking) return;
    this.out('\n');
    this.speaking = false;
  }

  /** The approvals asked for since the last call. */
  takeApprovals(): ApprovalAsk[] {
    return this.approvals.splice(0);
  }
}
