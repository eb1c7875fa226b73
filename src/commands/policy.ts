// The operator's policy: loaded (its examples proven, src/domain/policy/load.ts), digested, and appended to the
// policy stream as the version in force, or as a candidate in shadow; read back from that stream, which every
// server shares.
import { createHash } from 'node:crypto';
import { RuleViolation } from '../domain/messages.ts';
import { type LoadedPolicy, type Policy, loadPolicy, policyCanonicalJson } from '../domain/policy/index.ts';
import { POLICY_EVENT_VERSION, POLICY_STREAM, type PolicyCommand, type PolicyEvent, type PolicyState, decidePolicyChange, evolvePolicy, initialPolicyState, parsePolicyEvent } from '../domain/policy/events.ts';
import { type CommandContext, type CommandDeps, commandMetadata } from './context.ts';
import { type Decider, handleCommand } from './handle.ts';

const policyDecider: Decider<PolicyState, PolicyEvent, PolicyCommand> = {
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

export interface ShadowPolicy {
  /** The candidate's number (1, 2, …): what executions decided beside it record. */
  readonly shadow: number;
  readonly digest: string;
  readonly policy: Policy;
  readonly at: string;
  readonly by: unknown;
}

/** The policy stream read once: every version in force so far (oldest first) and the candidate in shadow. */
export interface PolicyRecord {
  readonly versions: PolicyVersion[];
  readonly shadow: ShadowPolicy | null;
}

/** A document, loaded with its examples proven, or InvalidPolicy. */
function loaded(document: unknown): { policy: Policy; digest: string } {
  const result = loadPolicy(document);
  if (!result.ok) throw new InvalidPolicy(result.problems);
  return { policy: result.policy, digest: policyDigest(result.policy) };
}

async function lastPosition(deps: CommandDeps): Promise<number> {
  return (await deps.store.readStream(POLICY_STREAM)).events.at(-1)?.position ?? 0;
}

async function handle(deps: CommandDeps, command: PolicyCommand, ctx: CommandContext) {
  return handleCommand(deps.store, POLICY_STREAM, policyDecider, command, commandMetadata(deps, ctx), { retries: 0 });
}

/** Loads the document and switches it on; the same document again changes nothing (unchanged: true). */
export async function applyPolicy(deps: CommandDeps, document: unknown, expectedVersion: number | null, ctx: CommandContext): Promise<{ version: number; digest: string; unchanged: boolean; position: number }> {
  const { policy, digest } = loaded(document);
  const handled = await handle(deps, { type: 'change_policy', policy, digest, expectedVersion }, ctx);
  if (handled.events.length === 0 && handled.before.digest !== digest) throw new RuleViolation('policy_unchanged', 'the policy was not changed');
  const position = handled.events.length > 0 ? handled.position : await lastPosition(deps);
  return { version: handled.after.version, digest, unchanged: handled.events.length === 0, position };
}

/** Loads a candidate and decides beside the policy in force with it from now on (replacing a candidate in shadow). */
export async function startShadow(deps: CommandDeps, document: unknown, ctx: CommandContext): Promise<{ shadow: number; digest: string; unchanged: boolean; position: number }> {
  const { policy, digest } = loaded(document);
  const handled = await handle(deps, { type: 'start_shadow', policy, digest }, ctx);
  const position = handled.events.length > 0 ? handled.position : await lastPosition(deps);
  return { shadow: handled.after.shadow?.shadow ?? 0, digest, unchanged: handled.events.length === 0, position };
}

/** The candidate in shadow becomes the policy in force (the next version), in one event pair. */
export async function promoteShadow(deps: CommandDeps, expectedVersion: number | null, ctx: CommandContext): Promise<{ shadow: number; version: number; digest: string; position: number }> {
  const handled = await handle(deps, { type: 'promote_shadow', expectedVersion }, ctx);
  const shadow = handled.before.shadow;
  if (shadow === null) throw new Error('promote_shadow: the decider promoted no shadow');
  return { shadow: shadow.shadow, version: handled.after.version, digest: shadow.digest, position: handled.position };
}

export async function dropShadow(deps: CommandDeps, ctx: CommandContext): Promise<{ shadow: number; position: number }> {
  const handled = await handle(deps, { type: 'drop_shadow' }, ctx);
  return { shadow: handled.before.shadow?.shadow ?? 0, position: handled.position };
}

export async function readPolicy(deps: Pick<CommandDeps, 'store'>): Promise<PolicyRecord> {
  const { events } = await deps.store.readStream(POLICY_STREAM);
  const versions: PolicyVersion[] = [];
  let shadow: ShadowPolicy | null = null;
  for (const stored of events) {
    const event = parsePolicyEvent(stored.type, stored.data);
    const metadata = stored.metadata as { occurred_at?: string; actor?: unknown };
    const at = metadata.occurred_at ?? stored.recordedAt;
    const by = metadata.actor ?? null;
    if (event.type === 'PolicyChanged') versions.push({ version: event.data.version, digest: event.data.digest, policy: event.data.policy, at, by, position: stored.position });
    else if (event.type === 'PolicyShadowStarted') shadow = { shadow: event.data.shadow, digest: event.data.digest, policy: event.data.policy, at, by };
    else shadow = null;
  }
  return { versions, shadow };
}

/** Every version in force so far, oldest first (empty: no policy was ever applied). */
export async function policyHistory(deps: Pick<CommandDeps, 'store'>): Promise<PolicyVersion[]> {
  return (await readPolicy(deps)).versions;
}

/** The version in force, or null: no policy (the classifier alone decides). */
export async function currentPolicy(deps: Pick<CommandDeps, 'store'>): Promise<PolicyVersion | null> {
  return (await policyHistory(deps)).at(-1) ?? null;
}
