// The operator's policy: loaded (its examples proven, src/domain/policy/load.ts), digested, and appended to the
// policy stream as the version in force; read back from that stream, which every server shares.
import { createHash } from 'node:crypto';
import { RuleViolation } from '../domain/messages.ts';
import { type LoadedPolicy, type Policy, loadPolicy, policyCanonicalJson } from '../domain/policy/index.ts';
import { type ChangePolicy, POLICY_EVENT_VERSION, POLICY_STREAM, type PolicyEvent, type PolicyState, decidePolicyChange, evolvePolicy, initialPolicyState, parsePolicyEvent } from '../domain/policy/events.ts';
import { type CommandContext, type CommandDeps, commandMetadata } from './context.ts';
import { type Decider, handleCommand } from './handle.ts';

const policyDecider: Decider<PolicyState, PolicyEvent, ChangePolicy> = {
  initialState: initialPolicyState,
  evolve: evolvePolicy,
  decide: decidePolicyChange,
  parse: (stored) => parsePolicyEvent(stored.type, stored.data),
  schemaVersion: POLICY_EVENT_VERSION,
};

/** A document that does not load: every problem, each naming its rule and example. */
export class InvalidPolicy extends Error {
  readonly code = 'invalid_policy';
  constructor(readonly problems: Extract<LoadedPolicy, { ok: false }>['problems']) {
    super(problems.map((p) => `${p.rule_id === null ? '' : `rule ${p.rule_id}: `}${p.example === undefined ? '' : `example ${JSON.stringify(p.example)}: `}${p.message}`).join('; '));
    this.name = 'InvalidPolicy';
  }
}

export const policyDigest = (policy: Policy): string => createHash('sha256').update(policyCanonicalJson(policy), 'utf8').digest('hex');

export interface PolicyVersion {
  readonly version: number;
  readonly digest: string;
  readonly policy: Policy;
  readonly at: string;
  readonly by: unknown;
  readonly position: number;
}

/** Loads the document and switches it on; the same document again changes nothing (unchanged: true). */
export async function applyPolicy(deps: CommandDeps, document: unknown, expectedVersion: number | null, ctx: CommandContext): Promise<{ version: number; digest: string; unchanged: boolean; position: number }> {
  const loaded = loadPolicy(document);
  if (!loaded.ok) throw new InvalidPolicy(loaded.problems);
  const digest = policyDigest(loaded.policy);
  const handled = await handleCommand(deps.store, POLICY_STREAM, policyDecider, { type: 'change_policy', policy: loaded.policy, digest, expectedVersion }, commandMetadata(deps, ctx), { retries: 0 });
  if (handled.events.length === 0 && handled.before.digest !== digest) throw new RuleViolation('policy_unchanged', 'the policy was not changed');
  const last = handled.events.length > 0 ? handled.position : ((await deps.store.readStream(POLICY_STREAM)).events.at(-1)?.position ?? 0);
  return { version: handled.after.version, digest, unchanged: handled.events.length === 0, position: last };
}

/** Every version in force so far, oldest first (empty: no policy was ever applied). */
export async function policyHistory(deps: Pick<CommandDeps, 'store'>): Promise<PolicyVersion[]> {
  const { events } = await deps.store.readStream(POLICY_STREAM);
  return events.map((stored) => {
    const { data } = parsePolicyEvent(stored.type, stored.data);
    const metadata = stored.metadata as { occurred_at?: string; actor?: unknown };
    return { version: data.version, digest: data.digest, policy: data.policy, at: metadata.occurred_at ?? stored.recordedAt, by: metadata.actor ?? null, position: stored.position };
  });
}

/** The version in force, or null: no policy (the classifier alone decides). */
export async function currentPolicy(deps: Pick<CommandDeps, 'store'>): Promise<PolicyVersion | null> {
  return (await policyHistory(deps)).at(-1) ?? null;
}
