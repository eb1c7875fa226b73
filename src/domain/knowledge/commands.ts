// upsert_knowledge exactly as the agent's tool and POST /knowledge send it, and the key that identifies an
// item: its kind and its title, normalised, so writing the same title again updates the item.
import { z } from 'zod';
import { AboutSlug, KnowledgeBody, KnowledgeKind, KnowledgeTitle, MAX_ABOUT, MAX_TAGS, Tag } from './events.ts';

/** In first-seen order, each once. */
const distinct = (values: string[]) => [...new Set(values)];

export const UpsertKnowledge = z.strictObject({
  kind: KnowledgeKind,
  title: KnowledgeTitle,
  body: KnowledgeBody,
  /** Empty for a general note; given, it replaces what the item was about. */
  about: z.array(AboutSlug).max(MAX_ABOUT).transform(distinct),
  /** Omitted on an update: the tags stay as they are; given, they replace them. */
  tags: z.array(Tag).max(MAX_TAGS).transform(distinct).optional(),
  /** The session that wrote it, when one did. */
  session_id: z.string().min(1).max(200).regex(/^[^\0]*$/, 'must not contain a NUL character').optional(),
});
export type UpsertKnowledge = z.infer<typeof UpsertKnowledge>;
export type UpsertKnowledgeInput = z.input<typeof UpsertKnowledge>;

/** Commands on one knowledge stream; the command layer has chosen the id (the existing item's, or a new one). */
export type KnowledgeCommand = { type: 'upsert_knowledge'; knowledge_id: string } & UpsertKnowledge;

/** The normalised title that, with the kind, identifies an item: trimmed, spaces collapsed, lowercase. */
export function knowledgeTitleKey(title: string): string {
  return title.trim().replace(/\s+/g, ' ').toLowerCase();
}
