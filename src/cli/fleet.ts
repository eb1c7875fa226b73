// `nomos fleet import FILE`: sends an inventory file (YAML or JSON) to a running server's POST /entities and
// prints what became of each entity. It talks HTTP only, so it works against any server it can reach.
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { serverClient } from './server-client.ts';
import YAML from 'yaml';
import { z } from 'zod';

const Reply = z.object({ entities: z.array(z.object({ slug: z.string(), result: z.string(), position: z.number() })), position: z.number() });

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
  const client = serverClient(env);
  const reply = await client.request('POST', '/entities', { body: payload, schema: Reply, what: 'the inventory', timeoutMs: 120_000 });
  const width = Math.max(...reply.entities.map((e) => e.slug.length));
  return reply.entities.map((e) => `${e.slug.padEnd(width)}  ${e.result}`);
}
