// The knowledge decider: an upsert on a new stream records the item; on an existing one it becomes
// KnowledgeUpdated with exactly what changed, or nothing when nothing did.
import { RuleViolation } from '../messages.ts';
import { type KnowledgeCommand, knowledgeTitleKey } from './commands.ts';
import type { KnowledgeEvent, KnowledgeEventOf } from './events.ts';
import type { Knowledge, KnowledgeState } from './state.ts';

export function decide(command: KnowledgeCommand, state: KnowledgeState): KnowledgeEvent[] {
  switch (command.type) {
    case 'upsert_knowledge':
      return state === null ? decideRecord(command) : decideUpdate(command, state);
    default: {
      const unhandled: never = command.type;
      throw new Error(`decide: unhandled knowledge command ${JSON.stringify(unhandled)}`);
    }
  }
}

function decideRecord(command: KnowledgeCommand): KnowledgeEvent[] {
  const { knowledge_id, kind, title, body, about, tags, session_id } = command;
  return [{ type: 'KnowledgeRecorded', data: { knowledge_id, kind, title, body, about, tags: tags ?? [], session_id: session_id ?? null } }];
}

function decideUpdate(command: KnowledgeCommand, item: Knowledge): KnowledgeEvent[] {
  // The command layer found this item by its key; another key here means it looked up the wrong stream.
  if (command.kind !== item.kind || knowledgeTitleKey(command.title) !== knowledgeTitleKey(item.title)) {
    throw new RuleViolation('knowledge_key_mismatch', `knowledge ${item.id} is the ${item.kind} "${item.title}", not the ${command.kind} "${command.title}"`);
  }
  const changes: Omit<KnowledgeEventOf<'KnowledgeUpdated'>['data'], 'session_id'> = {};
  if (command.title !== item.title) changes.title = command.title;
  if (command.body !== item.body) changes.body = command.body;
  if (!sameList(command.about, item.about)) changes.about = command.about;
  if (command.tags !== undefined && !sameList(command.tags, item.tags)) changes.tags = command.tags;
  if (Object.keys(changes).length === 0) return [];
  return [{ type: 'KnowledgeUpdated', data: { ...changes, session_id: command.session_id ?? null } }];
}

/** Same members, whatever their order: about and tags are sets kept in the order they were written. */
function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v) => b.includes(v));
}
