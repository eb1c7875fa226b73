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

/** `role:name:token` entries separated by commas, as in NOMOS_TOKENS=operator:alice:s3cret,agent:nomos:t0ken. */
export function parseTokens(spec: string): ApiToken[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((entry) => {
      const [role, name, ...rest] = entry.split(':');
      const token = rest.join(':');
      const parsedRole = ApiRole.safeParse(role);
      if (!parsedRole.success || !name || token.length < 8) {
        throw new Error(`NOMOS_TOKENS entry "${entry.slice(0, 40)}" must be role:name:token with role operator, agent or auditor and a token of 8+ characters`);
      }
      return { role: parsedRole.data, name, token };
    });
}
