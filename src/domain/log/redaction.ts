// Redacting a secret that ended up in an event's payload (docs/verifiable-log.md, "Redaction"): the decision is
// pure — which strings change and how many times — and the event that records it names who, when and why, and
// the SHA-256 the sealed leaf committed to, never the secret. Proofs over the leaf still hold after it.
import { z } from 'zod';
import { RuleViolation } from '../messages.ts';

/** What replaces each occurrence of the secret. */
export const REDACTED_MARK = '[REDACTED]';

/** The shortest text that may be redacted: shorter ones would blank out ordinary words. */
export const MIN_SECRET = 4;

const REDACTIONS_PREFIX = 'redactions-';

/** The one place a session's redactions stream is named: a stream of its own, so no session fold sees them. */
export function redactionStream(sessionId: string): string {
  return REDACTIONS_PREFIX + sessionId;
}

export const PayloadRedacted = z.object({
  session_id: z.string(),
  /** The redacted event's global position. */
  position: z.number().int().positive(),
  event_type: z.string(),
  /** Hex SHA-256 of the RFC 8785 JSON of the payload before: what the event's sealed leaf commits to. */
  data_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  reason: z.string().min(1),
  occurrences: z.number().int().positive(),
});
export type PayloadRedacted = z.infer<typeof PayloadRedacted>;

/**
 * `value` with every occurrence of `secret` in its string values replaced, and how many there were. Keys and the
 * JSON's structure are never touched: a redaction cannot rename a field or break the payload's shape.
 */
export function redactValue(value: unknown, secret: string): { value: unknown; occurrences: number } {
  let occurrences = 0;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const parts = v.split(secret);
      occurrences += parts.length - 1;
      return parts.join(REDACTED_MARK);
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return { value: walk(value), occurrences };
}

/** The redacted payload, or a refusal naming why there is nothing to redact. */
export function decideRedaction(data: unknown, secret: string): { data: unknown; occurrences: number } {
  if (secret.length < MIN_SECRET) throw new RuleViolation('secret_too_short', `the text to redact must be at least ${MIN_SECRET} characters, so that it cannot blank out ordinary words`);
  if (secret.includes(REDACTED_MARK)) throw new RuleViolation('secret_is_mark', `the text to redact contains the redaction mark ${REDACTED_MARK}`);
  const { value, occurrences } = redactValue(data, secret);
  if (occurrences === 0) throw new RuleViolation('text_not_found', 'the text does not occur in the event\'s payload: nothing to redact (already redacted, or another event)');
  return { data: value, occurrences };
}
