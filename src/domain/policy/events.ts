// The operator's policy as a stream of its own: each change is an event holding the whole document, its digest
// and (in the metadata) who made it. Version N is the Nth change; no event, no policy (the classifier decides).
// A candidate may run in shadow beside it: decided on every command, recorded, never obeyed, until it is promoted
// (becoming the next version) or dropped.
import { z } from 'zod';
import { RuleViolation, type CommandMetadata } from '../messages.ts';
import { Policy } from './document.ts';

export const POLICY_STREAM = 'policy';
export const POLICY_EVENT_VERSION = 1;

const Digest = z.string().regex(/^[0-9a-f]{64}$/);

export const policyEventSchemas = {
  /** The policy in force from now on: version, the loaded document, its sha256 over the canonical JSON; `shadow` when a promoted candidate. */
  PolicyChanged: z.object({ version: z.number().int().positive(), digest: Digest, policy: Policy, shadow: z.number().int().positive().optional() }),
  /** A candidate decided beside the policy in force, from now on, until promoted or dropped; numbered 1, 2, … */
  PolicyShadowStarted: z.object({ shadow: z.number().int().positive(), digest: Digest, policy: Policy }),
  PolicyShadowEnded: z.object({ shadow: z.number().int().positive(), outcome: z.enum(['promoted', 'dropped']) }),
} as const;

type Schemas = typeof policyEventSchemas;
export type PolicyEvent = { [K in keyof Schemas]: { type: K; data: z.infer<Schemas[K]> } }[keyof Schemas];

export function parsePolicyEvent(type: string, data: unknown): PolicyEvent {
  if (!Object.hasOwn(policyEventSchemas, type)) throw new Error(`not a policy event: ${type}`);
  const name = type as keyof Schemas;
  return { type: name, data: policyEventSchemas[name].parse(data) } as PolicyEvent;
}

export interface ShadowState {
  readonly shadow: number;
  readonly digest: string;
  readonly policy: Policy;
}

export interface PolicyState {
  readonly version: number;
  readonly digest: string | null;
  /** The candidate in shadow, if any. */
  readonly shadow: ShadowState | null;
  /** Shadows started so far (the next is numbered one more). */
  readonly shadows: number;
}

export const initialPolicyState: PolicyState = { version: 0, digest: null, shadow: null, shadows: 0 };

export function evolvePolicy(state: PolicyState, event: PolicyEvent): PolicyState {
  switch (event.type) {
    case 'PolicyChanged':
      return { ...state, version: event.data.version, digest: event.data.digest };
    case 'PolicyShadowStarted':
      return { ...state, shadow: { shadow: event.data.shadow, digest: event.data.digest, policy: event.data.policy }, shadows: event.data.shadow };
    case 'PolicyShadowEnded':
      return { ...state, shadow: null };
  }
}

/** A loaded policy to switch on, or to run in shadow; `expectedVersion` (If-Match) refuses it when another change came first. */
export type PolicyCommand =
  | { readonly type: 'change_policy'; readonly policy: Policy; readonly digest: string; readonly expectedVersion: number | null }
  | { readonly type: 'start_shadow'; readonly policy: Policy; readonly digest: string }
  | { readonly type: 'promote_shadow'; readonly expectedVersion: number | null }
  | { readonly type: 'drop_shadow' };

function requireVersion(expected: number | null, state: PolicyState): void {
  if (expected !== null && expected !== state.version) {
    throw new RuleViolation(
      'policy_version_mismatch',
      `the policy is at version ${state.version}, not ${expected} (If-Match): another change came first; read GET /policy, and apply yours on top of it`,
    );
  }
}

function requireShadow(state: PolicyState, action: string): ShadowState {
  if (state.shadow === null) throw new RuleViolation('no_shadow_policy', `no candidate policy is in shadow to ${action}; start one with PUT /policy/shadow`);
  return state.shadow;
}

/** The same document again changes nothing; a stale expected version is refused (409). */
export function decidePolicyChange(command: PolicyCommand, state: PolicyState, _meta: CommandMetadata): PolicyEvent[] {
  switch (command.type) {
    case 'change_policy':
      requireVersion(command.expectedVersion, state);
      if (command.digest === state.digest) return [];
      return [{ type: 'PolicyChanged', data: { version: state.version + 1, digest: command.digest, policy: command.policy } }];
    case 'start_shadow': {
      if (command.digest === state.shadow?.digest) return [];
      const shadow = state.shadows + 1;
      const ended: PolicyEvent[] = state.shadow === null ? [] : [{ type: 'PolicyShadowEnded', data: { shadow: state.shadow.shadow, outcome: 'dropped' } }];
      return [...ended, { type: 'PolicyShadowStarted', data: { shadow, digest: command.digest, policy: command.policy } }];
    }
    case 'promote_shadow': {
      requireVersion(command.expectedVersion, state);
      const shadow = requireShadow(state, 'promote');
      const ended: PolicyEvent = { type: 'PolicyShadowEnded', data: { shadow: shadow.shadow, outcome: 'promoted' } };
      if (shadow.digest === state.digest) return [ended];
      return [ended, { type: 'PolicyChanged', data: { version: state.version + 1, digest: shadow.digest, policy: shadow.policy, shadow: shadow.shadow } }];
    }
    case 'drop_shadow': {
      const shadow = requireShadow(state, 'drop');
      return [{ type: 'PolicyShadowEnded', data: { shadow: shadow.shadow, outcome: 'dropped' } }];
    }
  }
}
