// `nomos policy suggest [--min-approvals N]`: the allow rules a running server (NOMOS_URL, NOMOS_TOKEN; operators
// and auditors) suggests from the approvals in its log, each with its evidence and what-if, printed as its JSON.
// Adopting one is `nomos policy apply` of the policy with the rule added.
import { z } from 'zod';
import { serverClient } from './server-client.ts';

// Each suggestion carries a what-if over every command ever requested: on a long history that takes a while.
const TIMEOUT_MS = 300_000;

const Answer = z.looseObject({
  suggestions: z.array(z.looseObject({ rule: z.looseObject({ id: z.string() }), evidence: z.looseObject({ approvals: z.number() }), what_if: z.looseObject({}) })),
});

/** The server's answer, as indented JSON; `minApprovals` as typed after the option (a whole number from 1). */
export async function suggestPolicy(minApprovals: string | undefined, env: NodeJS.ProcessEnv): Promise<string> {
  if (minApprovals !== undefined && !/^[1-9]\d{0,6}$/.test(minApprovals)) throw new Error(`--min-approvals takes a whole number from 1, not ${JSON.stringify(minApprovals)}`);
  const query = minApprovals === undefined ? '' : `?min_approvals=${minApprovals}`;
  const reply = await serverClient(env).request('GET', `/policy/suggestions${query}`, { schema: Answer, what: 'the suggestions', timeoutMs: TIMEOUT_MS });
  return JSON.stringify(reply, null, 2);
}
