// The knowledge and relation tools' side of the agent, on the same command functions and queries as the API.
import type { Queryable } from '../ports/db.ts';
import { getRelations } from '../projections/entities.ts';
import { getEntityKnowledge, searchKnowledge } from '../projections/knowledge.ts';
import type { CommandDeps } from '../commands/context.ts';
import { createRelationship, updateEntityAttributes } from '../commands/entity.ts';
import { upsertKnowledge } from '../commands/knowledge.ts';
import type { KnowledgeTools } from './tools.ts';

export function knowledgeTools(deps: CommandDeps, readDb: Queryable): KnowledgeTools {
  return {
    search: (query) => searchKnowledge(readDb, query, 10),
    forEntity: (slug) => getEntityKnowledge(readDb, slug),
    upsert: (input, sessionId, ctx) => upsertKnowledge(deps, { ...input, session_id: sessionId }, ctx),
    relations: async (slug) => (await getRelations(readDb, slug)) ?? { error: `${slug} is not in the inventory` },
    updateAttributes: (slug, attributes, ctx) => updateEntityAttributes(deps, slug, attributes, ctx),
    relate: (input, ctx) => createRelationship(deps, input, ctx),
  };
}
