// Who an MCP client is when the server checks no tokens: an agent named after what it said it is at its
// handshake (clientInfo.name), reduced to a slug so that a name cannot pass for another actor ("operator:x").
import type { McpPrincipal } from './sessions.ts';

const MAX_SLUG = 64;

export function clientSlug(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, MAX_SLUG)
    .replace(/[-.]+$/, '');
  return slug === '' ? 'unnamed' : slug;
}

export function agentFor(clientName: string): McpPrincipal {
  return { role: 'agent', name: clientSlug(clientName) };
}
