// `nomos fleet`: the inventory through a running server's HTTP API. `import FILE` registers an inventory file
// (src/cli/fleet-file.ts reads it); `list` prints the fleet with each host's reachability; `retire SLUG`
// takes an entity out of it. It talks HTTP only, so it works against any server it can reach.
import { z } from 'zod';
import { readFleetFile } from './fleet-file.ts';
import { serverClient } from './server-client.ts';

const Reply = z.object({ entities: z.array(z.object({ slug: z.string(), result: z.string(), position: z.number() })), position: z.number() });

/** Registers the inventory in `file`; one line per entity ("slug  result"), or throws with each problem of the file or the server's. */
export async function importInventory(file: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const entities = await readFleetFile(file);
  const client = serverClient(env);
  const reply = await client.request('POST', '/entities', { body: { entities }, schema: Reply, what: 'the inventory', timeoutMs: 120_000 });
  const width = Math.max(...reply.entities.map((e) => e.slug.length));
  return reply.entities.map((e) => `${e.slug.padEnd(width)}  ${e.result}`);
}

const Listed = z.object({
  slug: z.string(),
  type: z.string(),
  state: z.string(),
  parent: z.string().nullable(),
  pve_id: z.number().nullable(),
  ssh: z.object({ host: z.string(), port: z.number(), user: z.string() }).passthrough().nullable(),
  retired: z.object({ at: z.string(), by: z.string().nullable(), reason: z.string() }).nullable(),
  health: z
    .object({ reachable: z.boolean().nullable(), last_contact_at: z.string().nullable(), last_failure_at: z.string().nullable(), last_error: z.string().nullable(), checked_at: z.string().nullable() })
    .nullable(),
});
type Listed = z.infer<typeof Listed>;
const ListReply = z.object({ entities: z.array(Listed.passthrough()) });

/** `nomos fleet list`: a table (or the API's JSON with `json`); retired entities only with `all`. */
export async function listFleet(options: { all?: boolean; json?: boolean }, env: NodeJS.ProcessEnv, now = new Date()): Promise<string> {
  const client = serverClient(env);
  const { entities } = await client.request('GET', `/entities${options.all ? '?include=retired' : ''}`, { schema: ListReply, what: 'the inventory' });
  if (options.json) return JSON.stringify(entities, null, 2);
  if (entities.length === 0) return options.all ? 'The inventory is empty.' : 'No entities (retired ones show with --all).';
  const hosts = new Map(entities.map((e) => [e.slug, e]));
  const rows = entities.map((e) => [e.slug, e.type, targetOf(e), e.retired ? 'retired' : e.state, reachability(e, hosts.get(e.parent ?? '')), lastContact(e, now)]);
  return table(['SLUG', 'KIND', 'TARGET', 'STATUS', 'REACHABILITY', 'LAST CONTACT'], rows);
}

const RetireReply = z.object({ slug: z.string(), position: z.number(), events: z.array(z.string()) });

/** `nomos fleet retire SLUG`: one line saying it is done, or throws with the server's refusal. */
export async function retireFleetEntity(slug: string, reason: string | undefined, env: NodeJS.ProcessEnv): Promise<string> {
  const client = serverClient(env);
  await client.request('DELETE', `/entities/${encodeURIComponent(slug)}`, { body: { ...(reason !== undefined && { reason }) }, schema: RetireReply, what: `retiring ${slug}` });
  return `${slug} retired: off the default lists, and no command runs on it (restore: POST /entities/${slug}/restore)`;
}

function targetOf(e: Listed): string {
  if (e.ssh) return `${e.ssh.user}@${e.ssh.host}:${e.ssh.port}`;
  return e.parent ? `${e.parent} #${e.pve_id ?? '?'}` : '-';
}

/** A host's own word; a guest is as reachable as its host. */
function reachability(e: Listed, host: Listed | undefined): string {
  const health = e.health ?? host?.health ?? null;
  const via = e.health === null && host ? ' (host)' : '';
  if (health === null || health.reachable === null) return `unknown${via}`;
  if (health.reachable) return `reachable${via}`;
  return `UNREACHABLE${via}: ${(health.last_error ?? '').replace(/\s+/g, ' ').slice(0, 60)}`;
}

function lastContact(e: Listed, now: Date): string {
  const at = e.health?.last_contact_at;
  if (e.health === null) return '-';
  return at ? `${at.slice(0, 16).replace('T', ' ')} (${ago(now.getTime() - Date.parse(at))})` : 'never';
}

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s}s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)}m ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}
