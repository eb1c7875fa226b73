// A draft as typed into the Policy page, sent as the server reads it: JSON when it parses as JSON, otherwise the
// text itself as YAML (the server names the line of a YAML error); and a failed write read back for the page.
import { ApiError, TextBody, describe } from '../../lib/api.ts';
import type { PolicyProblem } from './types.ts';

export type DraftBody = { json: unknown } | { yaml: TextBody };

export function draftBody(text: string): DraftBody {
  try {
    return { json: JSON.parse(text) as unknown };
  } catch {
    return { yaml: new TextBody(text, 'application/yaml') };
  }
}

/** The document itself (PUT /policy, PUT /policy/shadow). */
export const documentOf = (body: DraftBody): unknown => ('json' in body ? body.json : body.yaml);

/** POST /policy/what-if: `{policy: document}` as JSON, or the YAML document as it was typed. */
export const whatIfOf = (body: DraftBody): unknown => ('json' in body ? { policy: body.json } : body.yaml);

export const ifMatch = (version: number) => ({ headers: { 'if-match': `"${version}"` } });

export interface Refusal {
  message: string;
  problems: PolicyProblem[];
  /** Another change came first (409 policy_version_mismatch): what the page shows is stale. */
  stale: boolean;
}

export function refusal(error: unknown): Refusal {
  if (!(error instanceof ApiError)) return { message: describe(error), problems: [], stale: false };
  const body = error.body as { problems?: PolicyProblem[] } | null;
  const stale = error.code === 'policy_version_mismatch';
  return {
    message: stale ? `Another change came first, so nothing was applied; the page now shows the policy in force. (${error.detail})` : describe(error),
    problems: error.code === 'invalid_policy' && Array.isArray(body?.problems) ? body.problems : [],
    stale,
  };
}
