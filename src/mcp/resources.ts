// What an MCP client can read without calling a tool: sessions (the read models: the session with its
// aggregates and blocker, its transcript, tool calls, plan and executions), knowledge items (runbooks first)
// and the fleet's inventory. Reads only, so every role may.
import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolServices } from '../agent/tools.ts';
import { listEntities } from '../projections/entities.ts';
import { pageSessionExecutions } from '../projections/executions.ts';
import { getKnowledge, listKnowledge } from '../projections/knowledge.ts';
import { getPlan } from '../projections/plans.ts';
import { getSession, listSessions } from '../projections/sessions.ts';
import { getMessages, getToolCalls } from '../projections/transcript.ts';

const LISTED = 50;
/** A session resource holds at most this many tool calls and executions (the first ones); HTTP pages through the rest. */
export const RESOURCE_ITEMS = 500;

const json = (uri: URL, value: unknown): ReadResourceResult => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }] });

const variable = (value: string | string[] | undefined): string => (Array.isArray(value) ? (value[0] ?? '') : (value ?? ''));

/** `readable` resolves once the read models hold what the client wrote last. */
export function registerResources(server: McpServer, services: ToolServices, readable: () => Promise<void>): void {
  const db = services.readDb;

  server.registerResource(
    'session',
    new ResourceTemplate('nomos://sessions/{id}', {
      list: async () => ({
        resources: (await readable().then(() => listSessions(db, { limit: LISTED }))).sessions.map((s) => ({
          uri: `nomos://sessions/${s.id}`,
          name: s.title ?? `session ${s.id}`,
          description: `${s.status}${s.outcome ? ` (${s.outcome})` : ''}${s.blocker ? `; blocked: ${s.blocker}` : ''}; ${s.tool_call_count} tool calls; last active ${s.last_active_at}`,
          mimeType: 'application/json',
        })),
      }),
    }),
    { title: 'A Nomos session', description: 'One session: its aggregates and blocker, transcript, tool calls, plan and executions (the read models).', mimeType: 'application/json' },
    async (uri, variables) => {
      const id = variable(variables.id);
      await readable();
      const session = await getSession(db, id);
      if (session === null) throw new McpError(ErrorCode.InvalidParams, `there is no session ${id}`);
      const [messages, calls, plan, executions] = await Promise.all([
        getMessages(db, id),
        getToolCalls(db, id, { after: 0, limit: RESOURCE_ITEMS + 1 }),
        getPlan(db, id),
        pageSessionExecutions(db, id, { after: -1, limit: RESOURCE_ITEMS }),
      ]);
      const more = { tool_calls: calls.length > RESOURCE_ITEMS, executions: executions.next !== null };
      const rest = more.tool_calls || more.executions ? { more, read_further: `GET /sessions/${id}/tool_calls and /executions page through the rest` } : {};
      return json(uri, { session, messages, tool_calls: calls.slice(0, RESOURCE_ITEMS), plan, executions: executions.executions, ...rest });
    },
  );

  server.registerResource(
    'knowledge',
    new ResourceTemplate('nomos://knowledge/{id}', {
      list: async () => ({
        resources: (await readable().then(() => listKnowledge(db, LISTED * 2))).map((k) => ({
          uri: `nomos://knowledge/${k.id}`,
          name: k.title,
          description: `${k.kind} about ${k.about.join(', ') || 'the fleet'}`,
          mimeType: 'text/markdown',
        })),
      }),
    }),
    { title: 'A runbook, investigation or note', description: 'What Nomos knows: reusable procedures (runbooks), diagnoses (investigations) and notes, about the entities they name.', mimeType: 'text/markdown' },
    async (uri, variables) => {
      const id = variable(variables.id);
      await readable();
      const item = await getKnowledge(db, id);
      if (item === null) throw new McpError(ErrorCode.InvalidParams, `there is no knowledge item ${id}`);
      const header = `# ${item.title}\n\n${item.kind} · about ${item.about.join(', ') || 'the fleet'}${item.tags.length > 0 ? ` · tags ${item.tags.join(', ')}` : ''} · updated ${item.updated_at}\n\n`;
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: header + item.body }] };
    },
  );

  server.registerResource(
    'fleet',
    'nomos://fleet',
    { title: 'The fleet', description: 'The inventory: hosts, containers and VMs with their state and attributes.', mimeType: 'application/json' },
    async (uri) => {
      await readable();
      return json(uri, { entities: await listEntities(db) });
    },
  );
}
