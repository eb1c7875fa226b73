// Deleted sessions in reads: they leave every list and lookup by default, and stay reachable for operators and
// auditors with include_deleted=true, marked deleted, with their transcript, plan, approvals and executions.
import { z } from 'zod';
import type { Queryable } from '../ports/db.ts';
import { type SessionView, getSession } from '../projections/sessions.ts';
import { HttpProblem } from './errors.ts';

/** `include_deleted=true|false`; left empty by a script, it means "not given". */
export const IncludeDeleted = z.preprocess((v) => (v === '' ? undefined : v), z.enum(['true', 'false'], { error: 'include_deleted must be true or false' }).optional());

/** Deleted sessions are for operators and auditors to look at; an agent is refused (403). */
export function requireAuditReader(role: string): void {
  if (role === 'agent') throw new HttpProblem(403, 'forbidden', 'role agent may not read deleted sessions (include_deleted=true is for operators and auditors)');
}

/** Whether the read includes deleted sessions' rows: include_deleted=true, refused (403) to an agent. */
export function includesDeleted(includeDeleted: 'true' | 'false' | undefined, role: string): boolean {
  if (includeDeleted !== 'true') return false;
  requireAuditReader(role);
  return true;
}

/** The answer to a read of a deleted session, or of what belongs to one, asked without include_deleted. */
export function deletedProblem(what: string, role: string): HttpProblem {
  const how = role === 'agent' ? '' : '; operators and auditors read it with include_deleted=true';
  return new HttpProblem(404, 'session_deleted', `${what}${how}`);
}

/** The session a read is about: a deleted one only with include_deleted=true (operators and auditors), else 404. */
export async function readableSession(db: Queryable, id: string, includeDeleted: 'true' | 'false' | undefined, role: string): Promise<SessionView> {
  const withDeleted = includesDeleted(includeDeleted, role);
  const session = await getSession(db, id, { includeDeleted: true });
  if (!session) throw new HttpProblem(404, 'session_not_found', `no session ${id}`);
  if (session.deleted && !withDeleted) throw deletedProblem(`session ${id} was deleted`, role);
  return session;
}
