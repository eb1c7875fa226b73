// Every event a knowledge stream (one runbook, investigation or note the agent or an operator wrote back)
// can hold, with the field schemas its commands share. Each event is parsed back through these schemas.
import { z } from 'zod';

export const KnowledgeKind = z.enum(['runbook', 'investigation', 'note']);
export type KnowledgeKind = z.infer<typeof KnowledgeKind>;

const NO_NUL = /^[^\0]*$/;
const noNul = 'must not contain a NUL character';

export const MAX_TITLE_CHARS = 300;
export const MAX_BODY_CHARS = 50_000;
export const MAX_ABOUT = 50;
export const MAX_TAGS = 20;

/** Shown as written, but with its spaces trimmed and collapsed: "NFS  export " and "NFS export" are one title. */
export const KnowledgeTitle = z
  .string()
  .transform((s) => s.trim().replace(/\s+/g, ' '))
  .pipe(z.string().min(1, 'title must not be blank').max(MAX_TITLE_CHARS).regex(NO_NUL, noNul));

/** Markdown. */
export const KnowledgeBody = z.string().min(1, 'body must not be empty').max(MAX_BODY_CHARS).regex(NO_NUL, noNul);

/**
 * What an item is about: inventory slugs (host:strong, lxc:nfs-export, vm:zimaos) and the other things the
 * agent names the same way (pool:ludo-lvm), which need not be in the inventory.
 */
export const AboutSlug = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9._-]{1,63}$/, 'about holds slugs TYPE:NAME, e.g. host:strong, lxc:nfs-export, pool:ludo-lvm');

/** Lowercase, trimmed, spaces collapsed: "Docker " and "docker" are one tag. */
export const Tag = z
  .string()
  .transform((s) => s.trim().replace(/\s+/g, ' ').toLowerCase())
  .pipe(z.string().min(1, 'a tag must not be blank').max(50).regex(/^\P{Cc}*$/u, 'a tag must not contain control characters'));

export const knowledgeEventSchemas = {
  /** A new item. `session_id`: the session that wrote it, when one did. */
  KnowledgeRecorded: z.object({
    knowledge_id: z.string().min(1).max(200),
    kind: KnowledgeKind,
    title: z.string(),
    body: z.string(),
    about: z.array(z.string()),
    tags: z.array(z.string()),
    session_id: z.string().nullable(),
  }),
  /** Written again under the same kind and title: these fields changed, and only these. */
  KnowledgeUpdated: z.object({
    title: z.string().optional(),
    body: z.string().optional(),
    about: z.array(z.string()).optional(),
    tags: z.array(z.string()).optional(),
    session_id: z.string().nullable(),
  }),
} as const;

export const KNOWLEDGE_EVENT_VERSION = 1;

type Schemas = typeof knowledgeEventSchemas;
export type KnowledgeEventType = keyof Schemas;
export type KnowledgeEvent = { [K in KnowledgeEventType]: { type: K; data: z.infer<Schemas[K]> } }[KnowledgeEventType];
export type KnowledgeEventOf<K extends KnowledgeEventType> = Extract<KnowledgeEvent, { type: K }>;

export function isKnowledgeEventType(type: string): type is KnowledgeEventType {
  return Object.hasOwn(knowledgeEventSchemas, type);
}

/** Parses a stored event back into the union; throws on an unknown type or a malformed payload. */
export function parseKnowledgeEvent(type: string, data: unknown): KnowledgeEvent {
  if (!isKnowledgeEventType(type)) throw new Error(`unknown knowledge event type ${type}`);
  return { type, data: knowledgeEventSchemas[type].parse(data) } as KnowledgeEvent;
}
