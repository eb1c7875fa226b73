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
import type { ModelCallView, UsageGroup, UsageRow } from '../../../src/projections/model-calls.ts';
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
  /** cost: present when the server prices models (NOMOS_MODEL_PRICES), null when a model the session used has no price. */
  session: SessionView & { cost?: number | null };
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

/** Present when the server prices models (NOMOS_MODEL_PRICES); null when a model involved has no price. */
interface Priced {
  cost?: number | null;
}

/** A row of GET /sessions/:id/model_calls. */
export type ModelCallRow = ModelCallView & Priced;

export type UsageTotals = Omit<UsageRow, 'key' | 'model'> & Priced;

/** GET /usage: totals since a time, by model, day or session, each group with its models. */
export interface UsageAnswer {
  since: string | null;
  group_by: UsageGroup;
  groups: Array<UsageTotals & { key: string; models: Array<UsageTotals & { model: string }> }>;
  totals: UsageTotals;
  as_of_position: number;
}

/** GET /agent: whether the agent runs, with which model and provider, how its context is budgeted, its last provider failure. */
export interface AgentState {
  enabled: boolean;
  model: string | null;
  provider_host: string | null;
  context: null | {
    window_tokens: number;
    window_source: 'configured' | 'known' | 'default';
    reserve_tokens: number;
    budget_tokens: number;
    system_prompt_tokens: number;
    tools_tokens: number;
    /** What the system prompt and the tools leave of the budget for the session's messages. */
    session_tokens: number;
  };
  ssh_key_configured: boolean;
  last_provider_error: null | { at: string; session_id: string; model: string; provider_host: string; status: number | null; code: string | null; message: string };
}

/** A signed checkpoint as GET /log and GET /log/checkpoints serve it; `note` is byte for byte as signed. */
export interface CheckpointView {
  tree_size: number;
  root: string;
  signed_at: string;
  note: string;
}

/** The last `nomos verify` run, as GET /log reports it (servers before it leave the field out). */
export interface LogVerification {
  at: string;
  ok: boolean;
  exit_code: number;
  summary: string;
  /** What it found, as it recorded it (its shape may grow: read with findingLines). */
  findings: unknown;
}

/** GET /log: how far the events are sealed, the latest checkpoint, and the seal lag. */
export interface LogStatus {
  sealed: boolean;
  origin: string | null;
  tree_size: number;
  last_position: number;
  head_position: number;
  lag_events: number;
  sealed_at: string | null;
  checkpoint: CheckpointView | null;
  verification?: LogVerification | null;
}

/** GET /log/checkpoints: newest first; `next_before` pages on. */
export interface CheckpointsPage {
  checkpoints: CheckpointView[];
  next_before: number | null;
}
