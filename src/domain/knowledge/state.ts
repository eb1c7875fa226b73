// A knowledge item folded from its stream: what an upsert is compared against. null until it is recorded.
import type { KnowledgeEvent, KnowledgeKind } from './events.ts';

export interface Knowledge {
  readonly id: string;
  readonly kind: KnowledgeKind;
  readonly title: string;
  readonly body: string;
  readonly about: readonly string[];
  readonly tags: readonly string[];
}

export type KnowledgeState = Knowledge | null;

export const initialKnowledgeState: KnowledgeState = null;

export function evolve(state: KnowledgeState, event: KnowledgeEvent): KnowledgeState {
  if (event.type === 'KnowledgeRecorded') {
    const { knowledge_id, kind, title, body, about, tags } = event.data;
    return { id: knowledge_id, kind, title, body, about, tags };
  }
  // Nothing but KnowledgeRecorded can open a stream; a stray event before it changes nothing.
  if (state === null) return state;
  switch (event.type) {
    case 'KnowledgeUpdated': {
      const { title, body, about, tags } = event.data;
      return {
        ...state,
        ...(title !== undefined && { title }),
        ...(body !== undefined && { body }),
        ...(about !== undefined && { about }),
        ...(tags !== undefined && { tags }),
      };
    }
    default: {
      const unhandled: never = event;
      throw new Error(`evolve: unhandled knowledge event ${JSON.stringify(unhandled)}`);
    }
  }
}
