// `nomos fleet import FILE`: sends an inventory file (YAML or JSON) to a running server's POST /entities and
// prints what became of each entity. It talks HTTP only, so it works against any server it can reach.
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { Command } from 'commander';
import YAML from 'yaml';
import { z } from 'zod';

export const DEFAULT_URL = 'http://127.0.0.1:8092';

const Reply = z.object({ entities: z.array(z.object({ slug: z.string(), result: z.string(), position: z.number() })), position: z.number() });
const Problem = z.object({ code: z.string().optional(), detail: z.string().optional() });

export function fleetCommand(): Command {
  const fleet = new Command('fleet').description('the fleet inventory, through a running server (NOMOS_URL, NOMOS_TOKEN)');
  fleet
    .command('import')
    .argument('<file>', 'inventory as YAML or JSON: {entities: [{slug, type, ssh | parent + pve_id, …}]}')
    .description(`register the hosts, containers and VMs in FILE with the server at NOMOS_URL (default ${DEFAULT_URL})`)
    .action(async (file: string) => {
      for (const line of await importInventory(file, process.env)) console.log(line);
    });
  return fleet;
}

async function readInventory(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8');
  const json = extname(file).toLowerCase() === '.json';
  let parsed: unknown;
  try {
    // YAML is a superset of JSON, but JSON.parse names a JSON file's mistakes in JSON's terms.
    parsed = json ? JSON.parse(text) : YAML.parse(text);
  } catch (error) {
    throw new Error(`${file} is not valid ${json ? 'JSON' : 'YAML'}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (parsed === null || parsed === undefined) throw new Error(`${file} holds no inventory`);
  return parsed;
}

/** Registers the inventory in `file`; one line per entity ("slug  result"), or throws with the server's problem. */
export async function importInventory(file: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const payload = await readInventory(file);
  const base = (env.NOMOS_URL || DEFAULT_URL).replace(/\/+$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (env.NOMOS_TOKEN) headers.authorization = `Bearer ${env.NOMOS_TOKEN}`;
  let response: Response;
  try {
    response = await fetch(`${base}/entities`, { method: 'POST', headers, body: JSON.stringify(payload), signal: AbortSignal.timeout(120_000) });
  } catch (error) {
    const cause = error instanceof Error ? ((error.cause instanceof Error ? error.cause.message : undefined) ?? error.message) : String(error);
    throw new Error(`cannot reach the Nomos server at ${base} (set NOMOS_URL to its address): ${cause}`);
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: reported as text below
  }
  if (!response.ok) {
    const problem = Problem.safeParse(body);
    const detail = problem.success ? (problem.data.detail ?? text) : text;
    const code = problem.success && problem.data.code ? ` ${problem.data.code}` : '';
    throw new Error(`${base} refused the inventory (${response.status}${code}): ${detail.slice(0, 4000)}`);
  }
  const reply = Reply.safeParse(body);
  if (!reply.success) throw new Error(`${base} answered POST /entities with something that is not an inventory reply: ${text.slice(0, 200)}`);
  const width = Math.max(...reply.data.entities.map((e) => e.slug.length));
  return reply.data.entities.map((e) => `${e.slug.padEnd(width)}  ${e.result}`);
}
