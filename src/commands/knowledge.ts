// Knowledge write-back as the agent's upsert_knowledge tool and POST /knowledge call it. An item is
// identified by its kind and normalised title, and its id is derived from them: writing the same title
// again lands on the same stream and updates the item rather than adding another, with no need to find it
// in a read model first. So two writers creating the same item at once cannot make two: the second one's
// append conflicts with the first, is retried, and becomes an update (or nothing).
import { createHash } from 'node:crypto';
import { type KnowledgeCommand, UpsertKnowledge, type UpsertKnowledgeInput, knowledgeTitleKey } from '../domain/knowledge/commands.ts';
import { decide } from '../domain/knowledge/decide.ts';
import { KNOWLEDGE_EVENT_VERSION, type KnowledgeEvent, type KnowledgeKind, parseKnowledgeEvent } from '../domain/knowledge/events.ts';
import { type KnowledgeState, evolve, initialKnowledgeState } from '../domain/knowledge/state.ts';
import { knowledgeStream } from '../domain/knowledge/stream.ts';
import { RuleViolation } from '../domain/messages.ts';
import { type CommandContext, type CommandDeps, commandMetadata } from './context.ts';
import { type Decider, handleCommand } from './handle.ts';
import { KeyedLock } from './keyed-lock.ts';

/** Every knowledge command is decided on fresh state, so a version conflict is always safe to retry. */
const RETRIES = 10;

export const knowledgeDecider: Decider<KnowledgeState, KnowledgeEvent, KnowledgeCommand> = {
  initialState: initialKnowledgeState,
  evolve,
  decide,
  parse: (stored) => parseKnowledgeEvent(stored.type, stored.data),
  schemaVersion: KNOWLEDGE_EVENT_VERSION,
};

export type UpsertResult = 'created' | 'updated' | 'unchanged';

export interface UpsertKnowledgeReply {
  knowledge_id: string;
  result: UpsertResult;
  /** Global position of the item's last event: pass it as min_position to read the item back. */
  position: number;
  events: string[];
}

const streams = new KeyedLock();

/** Fixed namespace of knowledge ids (a random UUID, chosen once): ids are UUIDv5 of "kind:normalised title" in it. */
const KNOWLEDGE_NAMESPACE = Buffer.from('3d0c3b4e8f6a4c1e9a57b2d1e0f4c6a8', 'hex');

/** The id of the item of this kind and title (RFC 9562 UUIDv5): the same for every spelling that normalises alike. */
export function knowledgeId(kind: KnowledgeKind, title: string): string {
  const hash = createHash('sha1').update(KNOWLEDGE_NAMESPACE).update(`${kind}:${knowledgeTitleKey(title)}`, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Records a runbook, investigation or note, or updates the one of the same kind and title (trimmed, spaces
 * collapsed, any case) with what changed; identical content appends nothing. RuleViolation
 * invalid_knowledge names each field that does not pass.
 */
export async function upsertKnowledge(deps: CommandDeps, input: UpsertKnowledgeInput, ctx: CommandContext): Promise<UpsertKnowledgeReply> {
  const parsed = UpsertKnowledge.safeParse(input);
  if (!parsed.success) {
    throw new RuleViolation('invalid_knowledge', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  }
  const item = parsed.data;
  const id = knowledgeId(item.kind, item.title);
  const stream = knowledgeStream(id);
  const command: KnowledgeCommand = { type: 'upsert_knowledge', knowledge_id: id, ...item };
  const handled = await streams.run(stream, () =>
    handleCommand(deps.store, stream, knowledgeDecider, command, commandMetadata(deps, ctx), { retries: RETRIES }),
  );
  const events = handled.events.map((e) => e.type);
  if (handled.events.length > 0) {
    return { knowledge_id: id, result: handled.before === null ? 'created' : 'updated', position: handled.position, events };
  }
  const last = (await deps.store.readStream(stream)).events.at(-1);
  return { knowledge_id: id, result: 'unchanged', position: last?.position ?? 0, events };
}
