// Who is signed in: the API token lives in this browser tab's sessionStorage (gone when the tab closes) and is sent
// as an Authorization header. GET /me says the role, so the page offers only what it may do; the server refuses anyway.
import type { Me, Role } from './types.ts';

const KEY = 'nomos.token';

function stored(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

class Auth {
  token = $state<string | null>(stored());
  me = $state<Me | null>(null);
  /** Set when the server refused the token (or wants one): the sign-in form shows it. */
  problem = $state<string | null>(null);

  signIn(token: string): void {
    this.token = token.trim();
    this.problem = null;
    try {
      sessionStorage.setItem(KEY, this.token);
    } catch {
      // private mode: the token lives in memory only
    }
  }

  signOut(): void {
    this.token = null;
    this.me = null;
    try {
      sessionStorage.removeItem(KEY);
    } catch {
      // nothing stored
    }
  }

  unauthenticated(detail: string): void {
    this.me = null;
    this.problem = detail;
  }

  get role(): Role | null {
    return this.me?.role ?? null;
  }
  /** Chat, commands, cancel, continue: operators and agents. */
  get canWrite(): boolean {
    return this.role === 'operator' || this.role === 'agent';
  }
  /** Approve, deny, assent windows, deleting sessions: operators only. */
  get canDecide(): boolean {
    return this.role === 'operator';
  }
}

export const auth = new Auth();
