// Receipts: the events of one approval or execution, each with its RFC 9162 inclusion path to one signed
// checkpoint, in a JSON file an auditor keeps and checks offline years later (src/log/verify-receipt.ts). Which
// events a receipt holds and what they say is read by one function, for the server choosing them and the auditor
// checking them alike.
import { z } from 'zod';
import { Actor } from '../domain/messages.ts';
import { Decision, parseSessionEvent, RiskClass, type SessionEventOf, type SessionEventType } from '../domain/session/events.ts';
import { sessionIdOf, sessionStream } from '../domain/session/stream.ts';
import type { Queryable } from '../ports/db.ts';
import type { EventStore } from '../ports/event-store.ts';
import { leafOf } from './leaf.ts';
import { inclusionNodes, inclusionProof } from './merkle.ts';
import { latestCheckpoint, listCheckpoints, readNodes, sealedEvent, sealState } from './store.ts';

export const RECEIPT_FORMAT = 'nomos-receipt/1';

export const ReceiptKind = z.enum(['approval', 'execution']);
export type ReceiptKind = z.infer<typeof ReceiptKind>;

// Canonical base64 only: a lenient decoder would give one leaf two spellings.
const Base64 = z.string().regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, { error: 'not standard base64' });
const Hash = Base64.refine((text) => Buffer.from(text, 'base64').length === 32, { error: 'not the base64 of a 32-byte hash' });

export const ReceiptEntry = z.object({
  position: z.number().int().positive().describe("the event's global position"),
  type: z.string().min(1).describe("the event's type"),
  leaf_index: z.number().int().nonnegative(),
  leaf: Base64.describe('base64 of the exact leaf bytes: the RFC 8785 JSON of the envelope (docs/verifiable-log.md)'),
  inclusion: z.array(Hash).describe("RFC 9162 §2.1.3 inclusion path to the checkpoint's root, base64, leaf side first"),
  data: z.record(z.string(), z.unknown()).describe("the event's data as stored: the SHA-256 of its RFC 8785 JSON is the leaf's data_sha256"),
  redacted: z
    .object({ by: z.unknown(), reason: z.string(), redaction_position: z.number().int() })
    .optional()
    .describe('present when the payload was redacted (POST /sessions/:id/redactions): `data` is the redacted copy, the leaf commits to the original'),
});
export type ReceiptEntry = z.infer<typeof ReceiptEntry>;

const ApprovalOutcome = z.enum(['pending', 'granted', 'denied', 'expired', 'cancelled']);
const ExecutionOutcome = z.enum(['not_started', 'running', 'succeeded', 'failed', 'timed_out', 'refused']);

export const ReceiptSummary = z
  .object({
    session_id: z.string(),
    command: z.string(),
    target: z.string(),
    risk_class: RiskClass,
    decision: Decision.nullable().describe("the policy's decision (allow, ask, deny); null before the policy was consulted"),
    rule: z.string().nullable().describe('the deciding rule (a rule id, classifier or floor); null before the policy was consulted'),
    reason: z.string().describe("the classifier's reason"),
    requested_by: Actor.nullable(),
    approval: z.object({ id: z.string(), status: ApprovalOutcome, by: Actor.nullable().describe('who decided; null while pending'), reason: z.string().nullable() }).nullable(),
    execution: ExecutionOutcome,
    exit_code: z.number().int().nullable(),
    goal: z.string().nullable().describe("the session's goal as of the request"),
    plan: z.array(z.string()).nullable().describe("the titles of the session's plan as of the request"),
  })
  .describe("what the entries say, stated plainly; a verifier derives it from the entries' data and leaves again");
export type ReceiptSummary = z.infer<typeof ReceiptSummary>;

export const Receipt = z.object({
  format: z.literal(RECEIPT_FORMAT),
  kind: ReceiptKind,
  id: z.string().min(1).describe('the approval or execution id'),
  origin: z.string().min(1).describe("the log's origin: the checkpoint's first line and its key name"),
  tree_size: z.number().int().positive().describe("the checkpoint's tree size, which every inclusion path is against"),
  checkpoint: z.string().min(1).describe('the signed checkpoint note, exactly as stored (GET /log/checkpoint)'),
  public_key: z.string().min(1).describe("the log's Ed25519 public key, PEM: an auditor should check against one obtained elsewhere"),
  summary: ReceiptSummary,
  entries: z.array(ReceiptEntry).min(1).describe('the events, in position order'),
});
export type Receipt = z.infer<typeof Receipt>;

/** An event as a receipt reads it: from the stream when choosing, from an entry and its leaf when checking. */
export interface ReceiptEvent {
  readonly position: number;
  readonly type: string;
  readonly stream: string;
  readonly metadata: unknown;
  readonly data: unknown;
}

/** The events lack what the receipt is about (its request), or one of them does not read as its type. */
export class ReceiptIncomplete extends Error {}

const DECISIONS = ['ApprovalGranted', 'ApprovalDenied', 'ApprovalExpired', 'ApprovalCancelled'] as const;
const ENDINGS = ['ExecutionSucceeded', 'ExecutionFailed', 'ExecutionTimedOut', 'ExecutionRefused'] as const;
const APPROVAL_STATUS = { ApprovalGranted: 'granted', ApprovalDenied: 'denied', ApprovalExpired: 'expired', ApprovalCancelled: 'cancelled' } as const;
const EXECUTION_STATUS = { ExecutionSucceeded: 'succeeded', ExecutionFailed: 'failed', ExecutionTimedOut: 'timed_out', ExecutionRefused: 'refused' } as const;

interface Found<K extends SessionEventType> {
  readonly at: ReceiptEvent;
  readonly type: K;
  readonly data: SessionEventOf<K>['data'];
}

/** An event of a type asked for (the caller checked it is one of those) as the domain reads it. */
function readAs<K extends SessionEventType>(at: ReceiptEvent): { type: K; data: SessionEventOf<K>['data'] } {
  try {
    // The union narrowed by a type parameter is beyond the compiler: parseSessionEvent checked the data against the type.
    return parseSessionEvent(at.type, at.data) as unknown as { type: K; data: SessionEventOf<K>['data'] };
  } catch (error) {
    throw new ReceiptIncomplete(`the ${at.type} at position ${at.position} does not read as one: ${(error as Error).message}`);
  }
}

/** The events of the given types that `where` accepts, in position order (whatever order they came in). */
function finder(events: readonly ReceiptEvent[]) {
  return <K extends SessionEventType>(types: readonly K[], where: (data: SessionEventOf<K>['data']) => boolean = () => true): Found<K>[] => {
    const found: Found<K>[] = [];
    for (const at of events) {
      if (!(types as readonly string[]).includes(at.type)) continue;
      const event = readAs<K>(at);
      if (where(event.data)) found.push({ at, type: event.type, data: event.data });
    }
    return found.sort((a, b) => a.at.position - b.at.position);
  };
}

const ActorOf = z.object({ actor: Actor });
const actorOf = (metadata: unknown) => ActorOf.safeParse(metadata).data?.actor ?? null;

/**
 * Of a session's events, those an approval's or execution's receipt holds, and what they say: the execution's
 * request (command, target, binding, verdict), the approval's request and its decision, the execution's start and
 * end, and the session's goal and plan as of the request (of the approval for an approval's receipt).
 */
export function readReceipt(kind: ReceiptKind, id: string, events: readonly ReceiptEvent[]): { positions: number[]; summary: ReceiptSummary } {
  const find = finder(events);
  const asked = kind === 'approval' ? find(['ApprovalRequested'], (d) => d.approval_id === id)[0] : undefined;
  if (kind === 'approval' && asked === undefined) throw new ReceiptIncomplete(`no ApprovalRequested for approval ${id}`);
  const executionId = asked?.data.execution_id ?? id;
  const requested = find(['ExecutionRequested'], (d) => d.execution_id === executionId)[0];
  if (requested === undefined) throw new ReceiptIncomplete(`no ExecutionRequested for execution ${executionId}`);
  const approval = asked ?? find(['ApprovalRequested'], (d) => d.execution_id === executionId)[0];
  const decided = approval && find(DECISIONS, (d) => d.approval_id === approval.data.approval_id)[0];
  const started = find(['ExecutionStarted'], (d) => d.execution_id === executionId)[0];
  const ended = find(ENDINGS, (d) => d.execution_id === executionId)[0];
  const asOf = (asked ?? requested).at.position;
  const goal = find(['GoalSet']).filter((e) => e.at.position < asOf).at(-1);
  const plan = find(['PlanProposed']).filter((e) => e.at.position < asOf).at(-1);
  const verdict = requested.data.verdict;
  const summary: ReceiptSummary = {
    session_id: sessionIdOf(requested.at.stream) ?? requested.at.stream,
    command: requested.data.command,
    target: requested.data.target,
    risk_class: verdict.risk_class,
    decision: verdict.decision ?? null,
    rule: verdict.rule_id ?? null,
    reason: verdict.reason,
    requested_by: actorOf(requested.at.metadata),
    approval: approval
      ? {
          id: approval.data.approval_id,
          status: decided ? APPROVAL_STATUS[decided.type] : 'pending',
          by: decided ? actorOf(decided.at.metadata) : null,
          reason: decided && 'reason' in decided.data ? decided.data.reason : null,
        }
      : null,
    execution: ended ? EXECUTION_STATUS[ended.type] : started ? 'running' : 'not_started',
    exit_code: ended && 'exit_code' in ended.data ? ended.data.exit_code : null,
    goal: goal?.data.goal ?? null,
    plan: plan ? plan.data.steps.map((step) => step.title) : null,
  };
  const positions = [goal, plan, requested, approval, decided, started, ended].flatMap((e) => (e ? [e.at.position] : []));
  return { positions: positions.sort((a, b) => a - b), summary };
}

/** The log does not cover every event of the receipt yet; retrying after `retryAfterSeconds` may find it does. */
export class ReceiptNotReady extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'ReceiptNotReady';
  }
}

// The sealing server's NOMOS_CHECKPOINT_EVERY is not known here (it may be another server): the cadence of the last
// two checkpoints stands for it, bounded by the default interval, since a quiet log's next checkpoint comes at once.
const DEFAULT_CHECKPOINT_MS = 10_000;

async function retryAfterSeconds(db: Queryable, now: number): Promise<number> {
  const [latest, previous] = await listCheckpoints(db, 2, null);
  const cadence = latest && previous ? latest.signedAt.getTime() - previous.signedAt.getTime() : DEFAULT_CHECKPOINT_MS;
  const due = latest ? latest.signedAt.getTime() + cadence - now : cadence;
  return Math.min(DEFAULT_CHECKPOINT_MS / 1000, Math.max(1, Math.ceil(due / 1000)));
}

/**
 * The receipt of an approval or execution of the session, against the latest checkpoint; ReceiptNotReady when that
 * checkpoint does not cover every event yet. The entries are the `events` rows, so their leaves are the sealed ones.
 */
export async function buildReceipt(db: Queryable, store: EventStore, subject: { readonly kind: ReceiptKind; readonly id: string; readonly sessionId: string }): Promise<Receipt> {
  const { kind, id } = subject;
  const stream = await store.readStream(sessionStream(subject.sessionId));
  const events = stream.events.map((e) => ({ position: e.position, type: e.type, stream: e.streamName, metadata: e.metadata, data: e.data }));
  const positions = new Set(readReceipt(kind, id, events).positions);
  const chosen = events.filter((e) => positions.has(e.position));
  const notReady = async (why: string) => new ReceiptNotReady(`the receipt of ${kind} ${id} is not ready: ${why}`, await retryAfterSeconds(db, Date.now()));
  const [state, checkpoint] = await Promise.all([sealState(db), latestCheckpoint(db)]);
  if (!state || !checkpoint) throw await notReady('nothing is signed yet: the log has no checkpoint (a server with NOMOS_SIGNING_KEY seals within NOMOS_SEAL_MS)');
  const size = checkpoint.treeSize;
  const rows = await Promise.all(chosen.map((e) => sealedEvent(db, e.position)));
  const covered = [];
  for (const [i, row] of rows.entries()) {
    const what = `the ${chosen[i]!.type} at position ${chosen[i]!.position}`;
    if (!row) throw await notReady(`${what} is not sealed yet (the sealer runs every NOMOS_SEAL_MS)`);
    if (row.leafIndex >= size) throw await notReady(`${what} is leaf ${row.leafIndex}, past the latest checkpoint (tree size ${size}); the next checkpoint comes within NOMOS_CHECKPOINT_EVERY`);
    covered.push(row);
  }
  const node = await readNodes(db, covered.flatMap((e) => inclusionNodes(e.leafIndex, size)));
  return Receipt.parse({
    format: RECEIPT_FORMAT,
    kind,
    id,
    origin: state.origin,
    tree_size: size,
    checkpoint: checkpoint.note,
    public_key: state.publicKey,
    summary: readReceipt(kind, id, covered.map((e) => e.event)).summary,
    entries: covered.map(({ leafIndex, event }) => ({
      position: event.position,
      type: event.type,
      leaf_index: leafIndex,
      leaf: leafOf(event).toString('base64'),
      inclusion: inclusionProof(leafIndex, size, node).map((h) => h.toString('base64')),
      data: event.data,
      ...(event.redaction && { redacted: { by: event.redaction.actor, reason: event.redaction.reason, redaction_position: event.redaction.position } }),
    })),
  });
}
