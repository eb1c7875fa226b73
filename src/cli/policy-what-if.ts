// `nomos policy what-if FILE`: what the policy in FILE (YAML or JSON) would have changed over every command ever
// requested, asked of a running server (NOMOS_URL, NOMOS_TOKEN; operators and auditors), printed as its JSON.
// A document the server refuses prints every problem it names.
import { z } from 'zod';
import { readDocument } from './policy.ts';
import { serverClient } from './server-client.ts';

// Every command ever requested is replayed: on a long history, the first what-if after a classifier upgrade
// judges thousands of commands before it answers.
const TIMEOUT_MS = 300_000;

const Counts = z.object({ unchanged: z.number(), newly_allowed: z.number(), newly_asked: z.number(), newly_denied: z.number() });
const Answer = z.looseObject({ replayed: z.number(), from: z.string().nullable(), to: z.string().nullable(), changes: Counts, samples: z.looseObject({}), flags: z.looseObject({}) });

/** The server's answer, as indented JSON. */
export async function whatIfFile(file: string, env: NodeJS.ProcessEnv): Promise<string> {
  const policy = await readDocument(file);
  const reply = await serverClient(env).request('POST', '/policy/what-if', { body: { policy }, schema: Answer, what: 'the what-if', timeoutMs: TIMEOUT_MS });
  return JSON.stringify(reply, null, 2);
}
