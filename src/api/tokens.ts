// API tokens as configuration gives them: `role:name:token` entries. Apart from auth.ts, which checks requests
// against them, so that reading the configuration loads no HTTP framework.
import { z } from 'zod';

export const ApiRole = z.enum(['operator', 'agent', 'auditor']);
export type ApiRole = z.infer<typeof ApiRole>;

export interface ApiToken {
  readonly role: ApiRole;
  readonly name: string;
  readonly token: string;
}

/** Shorter tokens can be guessed; a generated one (`openssl rand -hex 32`) is far longer. */
export const MIN_TOKEN_LENGTH = 32;

/**
 * `role:name:token` entries separated by commas, as in NOMOS_TOKENS=operator:alice:<32+ characters>. A refusal
 * names the entry by its place, role and name, never by its token: the message ends up in logs.
 */
export function parseTokens(spec: string): ApiToken[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((entry, index) => {
      const [role, name, ...rest] = entry.split(':');
      const token = rest.join(':');
      const which = `NOMOS_TOKENS entry ${index + 1}${name ? ` (${(role ?? '').slice(0, 20)}:${name.slice(0, 60)})` : ''}`;
      const parsedRole = ApiRole.safeParse(role);
      if (!parsedRole.success || !name || rest.length === 0) {
        throw new Error(`${which} must be role:name:token with role operator, agent or auditor`);
      }
      if (token.length < MIN_TOKEN_LENGTH) {
        throw new Error(`${which} has a token of ${token.length} characters; tokens need ${MIN_TOKEN_LENGTH} or more (generate one with: openssl rand -hex 32)`);
      }
      return { role: parsedRole.data, name, token };
    });
}
