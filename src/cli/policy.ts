// `nomos policy apply FILE` and `nomos policy check 'CMD' --target T`: the operator's policy through a running
// server (NOMOS_URL, NOMOS_TOKEN). A document the server refuses prints every problem it names, and changes nothing.
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import { serverClient } from './server-client.ts';

const Applied = z.object({ version: z.number(), digest: z.string(), unchanged: z.boolean() });
const Checked = z.object({ decision: z.enum(['allow', 'ask', 'deny']), risk_class: z.string(), rule_id: z.string(), policy_version: z.number(), reasons: z.array(z.string()) });

/** `nomos policy check`'s exit status by decision, as `nomos classify`'s by risk: 0 runs at once, 3 asks, 4 refused. */
export const POLICY_CHECK_EXIT = { allow: 0, ask: 3, deny: 4 } as const;

export async function readDocument(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8');
  const json = extname(file).toLowerCase() === '.json';
  try {
    return json ? JSON.parse(text) : YAML.parse(text, { uniqueKeys: true });
  } catch (error) {
    throw new Error(`${file} is not valid ${json ? 'JSON' : 'YAML'}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Switches the policy in FILE on; the line to print. */
export async function applyPolicyFile(file: string, env: NodeJS.ProcessEnv): Promise<string> {
  const document = await readDocument(file);
  const reply = await serverClient(env).request('PUT', '/policy', { body: document, schema: Applied, what: 'the policy' });
  return reply.unchanged ? `policy unchanged: version ${reply.version} (${reply.digest.slice(0, 12)})` : `policy version ${reply.version} in force (${reply.digest.slice(0, 12)})`;
}

/** The decision as JSON, and the exit status that says it. */
export async function checkPolicy(command: string, target: string, env: NodeJS.ProcessEnv): Promise<{ text: string; exitCode: number }> {
  const reply = await serverClient(env).request('POST', '/policy/check', { body: { command, target }, schema: Checked, what: 'the check' });
  return { text: JSON.stringify(reply, null, 2), exitCode: POLICY_CHECK_EXIT[reply.decision] };
}
