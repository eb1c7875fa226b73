// The operator's policy as a stream of its own: each change is an event holding the whole document, its digest
// and (in the metadata) who made it. Version N is the Nth change; no event, no policy (the classifier decides).
import { z } from 'zod';
import { RuleViolation, type CommandMetadata } from '../messages.ts';
import { Policy } from './document.ts';

export const POLICY_STREAM = 'policy';
export const POLICY_EVENT_VERSION = 1;

const Digest = z.string().regex(/^[0-9a-f]{64}$/);

export const policyEventSchemas = {
  /** The policy in force from now on: version, the loaded document, its sha256 over the canonical JSON. */
  PolicyChanged: z.object({ version: z.number().int().positive(), digest: Digest, policy: Policy }),
} as const;

export type PolicyEvent = { type: 'PolicyChanged'; data: z.infer<(typeof policyEventSchemas)['PolicyChanged']> };

export function parsePolicyEvent(type: string, data: unknown): PolicyEvent {
  if (type !== 'PolicyChanged') throw new Error(`not a policy event: ${type}`);
  return { type, data: policyEventSchemas.PolicyChanged.parse(data) };
}

export interface PolicyState {
  readonly version: number;
  readonly digest: string | null;
}

export const initialPolicyState: PolicyState = { version: 0, digest: null };

export function evolvePolicy(_state: PolicyState, event: PolicyEvent): PolicyState {
  return { version: event.data.version, digest: event.data.digest };
}

/** A loaded policy to switch on; `expectedVersion` (If-Match) refuses it when another change came first. */
export interface ChangePolicy {
  readonly type: 'change_policy';
  readonly policy: Policy;
  readonly digest: string;
  readonly expectedVersion: number | null;
}

/** The same document again changes nothing; a stale expected version is refused (409). */
export function decidePolicyChange(command: ChangePolicy, state: PolicyState, _meta: CommandMetadata): PolicyEvent[] {
  if (command.expectedVersion !== null && command.expectedVersion !== state.version) {
    throw new RuleViolation(
      'policy_version_mismatch',
      `the policy is at version ${state.version}, not ${command.expectedVersion} (If-Match): another change came first; read GET /policy, and apply yours on top of it`,
    );
  }
  if (command.digest === state.digest) return [];
  return [{ type: 'PolicyChanged', data: { version: state.version + 1, digest: command.digest, policy: command.policy } }];
}
