// Server shapes the session view reads that the shared types do not name yet (type-only, from the server's modules).
export type { MessageToolCall, ToolCallView } from '../../../../src/projections/transcript.ts';
export type { BlockerEvidence } from '../../../../src/domain/session/blocker.ts';
