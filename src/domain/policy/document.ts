// An operator's policy as a document: rules that let routine commands run without asking, always ask, or refuse
// them. Sizes are bounded so that a document is cheap to load and to prove (load.ts runs every example).
import { z } from 'zod';
import { EntitySlug } from '../entity/events.ts';

export const MAX_RULES = 500;
export const MAX_MATCH_WORDS = 50;
export const MAX_ALTERNATIVES = 50;
export const MAX_TARGETS = 100;
export const MAX_EXAMPLES = 100;
export const MAX_TEXT = 2000;

export const DECISIONS = ['allow', 'ask', 'deny'] as const;
export type Decision = (typeof DECISIONS)[number];

export const PolicyRuleId = z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, 'an id is 1–100 letters, digits, ".", "_" or "-"');

const Text = z.string().max(MAX_TEXT);

/** One word of a command: a string, or a non-empty list of the strings it may be. */
const MatchWord = z.union([Text, z.array(Text).min(1).max(MAX_ALTERNATIVES)], {
  error: 'a word is a string or a non-empty array of alternative strings',
});
export type MatchWord = z.infer<typeof MatchWord>;

const GLOB = /^[A-Za-z0-9._:*-]{1,100}$/;

/** A slug (`host:strong`), or a glob over slugs where `*` stands for any run of characters (`lxc:*`, `*`). */
const TargetPattern = z.string().refine((p) => (p.includes('*') ? GLOB.test(p) : EntitySlug.safeParse(p).success), {
  error: 'a target is a slug (host:NAME, lxc:NAME, vm:NAME) or a glob over slugs with * (lxc:*, *)',
});

const Example = Text.min(1);

const Examples = z
  .strictObject({
    /** Commands the rule must match. */
    match: z.array(Example).max(MAX_EXAMPLES).optional(),
    /** Commands the rule must not match. */
    not_match: z.array(Example).max(MAX_EXAMPLES).optional(),
  })
  .refine((e) => (e.match?.length ?? 0) + (e.not_match?.length ?? 0) <= MAX_EXAMPLES, { error: `at most ${MAX_EXAMPLES} examples per rule` });

export const PolicyRule = z.strictObject({
  id: PolicyRuleId,
  /** The words a simple command starts with, after the classifier's unwrapping. */
  match: z.array(MatchWord).min(1).max(MAX_MATCH_WORDS),
  /** Where the rule holds; every target when left out. */
  targets: z.array(TargetPattern).min(1).max(MAX_TARGETS).default(['*']),
  decision: z.enum(DECISIONS),
  justification: Text.regex(/\S/, 'a justification says why'),
  examples: Examples.optional(),
});
export type PolicyRule = z.infer<typeof PolicyRule>;

/** The document's own shape, before each rule is read (load.ts reads them one by one to report every problem). */
export const PolicyShape = z.strictObject({ rules: z.array(z.unknown()).max(MAX_RULES) });

/** A policy's shape; `loadPolicy` reads a document into one, checking besides that ids are unique and examples hold. */
export const Policy = z.strictObject({ rules: z.array(PolicyRule).max(MAX_RULES) });
export type Policy = z.infer<typeof Policy>;

/** JSON with object keys sorted and no spaces: one text per document, whatever the order it was written in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The text a policy's digest is taken of: the loaded document (defaults filled in) as canonical JSON. The domain
 * does no I/O and may not import node:crypto, so the caller hashes it (sha256).
 */
export function policyCanonicalJson(policy: Policy): string {
  return canonicalJson(policy);
}
