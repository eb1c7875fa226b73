// The shapes the console reads and sends, taken from the server's own modules (type-only imports: nothing of the
// server is bundled). A field renamed on the server breaks `npm run check:web`, not the page at run time.
import type { z } from 'zod';
import type { ChatMessageType } from '../../../src/agent/chat-messages.ts';
import type { SessionView } from '../../../src/projections/sessions.ts';
import type { MessageView, ToolCallView } from '../../../src/projections/transcript.ts';
import type { GoalView, PlanStepView } from '../../../src/projections/plans.ts';
import type { ApprovalView, ExecutionView } from '../../../src/projections/executions.ts';
import type { EntityView, Relations } from '../../../src/projections/entities.ts';
import type { KnowledgeHit, KnowledgeSummary, KnowledgeView } from '../../../src/projections/knowledge.ts';
import type { ProjectionStatus } from '../../../src/projections/projector.ts';
import type { SessionCommand } from '../../../src/domain/session/commands.ts';
import type { Verdict } from '../../../src/domain/risk/index.ts';

export type { SessionView, MessageView, ToolCallView, GoalView, PlanStepView, ApprovalView, ExecutionView, EntityView, Relations };
export type { KnowledgeHit, KnowledgeSummary, KnowledgeView, ChatMessageType };
export type SessionCommandBody = z.input<typeof SessionCommand>;
export type VerdictView = Verdict;

export type Role = 'operator' | 'agent' | 'auditor';
export interface Me {
  role: Role;
  name: string;
  /** Whether the server checks tokens (off: loopback only, no sign-in). */
  auth: boolean;
}

export interface SessionsPage {
  sessions: SessionView[];
  next_cursor: string | null;
  as_of_position: number;
}

export interface SessionDetail {
  session_id: string;
  session: SessionView;
  messages: MessageView[];
  as_of_position: number;
}

export interface PlanAnswer {
  session_id: string;
  current_generation: number | null;
  steps: PlanStepView[];
  goals: GoalView[];
  as_of_position: number;
}

export interface StoredEventView {
  event_id: string;
  type: string;
  stream_position: number;
  position: number;
  data: Record<string, unknown>;
  metadata: { actor?: { role: string; id?: string }; [key: string]: unknown };
  recorded_at: string;
}

export interface ProjectionsAnswer {
  head_position: number;
  projections: Array<Pick<ProjectionStatus, 'name' | 'version' | 'state' | 'position' | 'lag' | 'updated_at' | 'rebuild'> & { leader: boolean }>;
}

/** A message of a session's event stream (POST /chat, GET /sessions/:id/stream). */
export interface ChatStreamMessage {
  type: ChatMessageType;
  session_id: string;
  data: Record<string, unknown>;
}

/** GET /executions/:id: the recorded execution, and while it runs what it printed so far (and hung advice). */
export type ExecutionStatusAnswer = Partial<ExecutionView> & {
  execution_id: string;
  status: string;
  stdout_so_far?: string;
  stderr_so_far?: string;
  idle_ms?: number;
  running_ms?: number;
  server?: string;
  advice?: string;
  as_of_position: number;
};
