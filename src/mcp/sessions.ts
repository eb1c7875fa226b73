// MCP sessions, shared by every server through the database: the Mcp-Session-Id a client was given at its
// handshake names who it is (the token's actor), what it is (its name and version) and the Nomos session its
// tool calls go to. Nothing of it lives in one process, so any server answers any request of any client, and a
// server killed between two calls loses nothing. When an MCP session ends (its client's DELETE) or lapses (unused
// for its TTL, ended by the sweep), the Nomos session it opened is closed as abandoned (src/commands/close-abandoned.ts).
import { randomUUID } from 'node:crypto';
import { RuleViolation, type Client } from '../domain/messages.ts';
import { requireWriter } from '../domain/session/owner.ts';
import type { Queryable } from '../ports/db.ts';
import { type CommandContext, type CommandDeps, commandMetadata } from '../commands/context.ts';
import { loadSession, runSessionCommand } from '../commands/session.ts';

/** Whom a token names: the API's roles (an auditor reads, and is never an event's actor). */
export interface McpPrincipal {
  readonly role: 'operator' | 'agent' | 'auditor';
  readonly name: string;
}

export interface McpSession {
  readonly id: string;
  readonly principal: McpPrincipal;
  readonly client: Client;
  readonly protocolVersion: string;
  /** The Nomos session its calls are recorded in; null until its first call that needs one. */
  readonly nomosSessionId: string | null;
  readonly started: boolean;
  /** The log position of its last recorded call: its next call reads the read models once they hold it. */
  readonly lastPosition: number;
}

interface Row {
  id: string;
  actor_role: McpPrincipal['role'];
  actor_id: string;
  client_name: string;
  client_version: string;
  protocol_version: string;
  nomos_session_id: string | null;
  started: boolean;
  last_position: string;
}

const fromRow = (row: Row): McpSession => ({
  id: row.id,
  principal: { role: row.actor_role, name: row.actor_id },
  client: { name: row.client_name, version: row.client_version },
  protocolVersion: row.protocol_version,
  nomosSessionId: row.nomos_session_id,
  started: row.started,
  lastPosition: Number(row.last_position),
});

/** A session that has not been used for this long is gone: its client initializes again (HTTP 404, as MCP says). */
export const MCP_SESSION_TTL_MS = 30 * 24 * 3600_000;

export class McpSessions {
  constructor(private readonly db: Queryable) {}

  async open(principal: McpPrincipal, client: Client, protocolVersion: string): Promise<McpSession> {
    const id = randomUUID();
    await this.db.query(
      `INSERT INTO mcp_sessions (id, actor_role, actor_id, client_name, client_version, protocol_version) VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, principal.role, principal.name, client.name, client.version, protocolVersion],
    );
    return { id, principal, client, protocolVersion, nomosSessionId: null, started: false, lastPosition: 0 };
  }

  /** The session, when it exists and belongs to this token's principal (another token's session id is as good as unknown). */
  async find(id: string, principal: McpPrincipal): Promise<McpSession | null> {
    const { rows } = await this.db.query<Row>(
      `UPDATE mcp_sessions SET last_seen_at = now() WHERE id = $1 AND actor_role = $2 AND actor_id = $3
       RETURNING id, actor_role, actor_id, client_name, client_version, protocol_version, nomos_session_id, started, last_position`,
      [id, principal.role, principal.name],
    );
    return rows[0] ? fromRow(rows[0]) : null;
  }

  /** Whom a session was opened for: with auth off, a request's only way to know its client. */
  async principalOf(id: string): Promise<McpPrincipal | null> {
    const { rows } = await this.db.query<Pick<Row, 'actor_role' | 'actor_id'>>('SELECT actor_role, actor_id FROM mcp_sessions WHERE id = $1', [id]);
    return rows[0] ? { role: rows[0].actor_role, name: rows[0].actor_id } : null;
  }

  /**
   * Ends the session: false when it was not there (ended meanwhile, by another server too). `opened`: the Nomos
   * session it opened itself, for the caller to close; null when it opened none (or only attached to one).
   */
  async close(id: string, principal: McpPrincipal): Promise<{ ended: boolean; opened: string | null }> {
    const { rows } = await this.db.query<{ opened_session_id: string | null }>(
      'DELETE FROM mcp_sessions WHERE id = $1 AND actor_role = $2 AND actor_id = $3 RETURNING opened_session_id',
      [id, principal.role, principal.name],
    );
    return { ended: rows.length > 0, opened: rows[0]?.opened_session_id ?? null };
  }

  /**
   * Ends up to `limit` sessions unused for MCP_SESSION_TTL_MS by `now`, returning the Nomos sessions they had
   * opened (to close). The DELETE decides who ends each one, so two servers never both return it.
   */
  async endLapsed(now: Date, limit: number): Promise<string[]> {
    const { rows } = await this.db.query<{ opened_session_id: string | null }>(
      `DELETE FROM mcp_sessions WHERE id IN (SELECT id FROM mcp_sessions WHERE last_seen_at < $1 ORDER BY last_seen_at LIMIT $2)
       RETURNING opened_session_id`,
      [new Date(now.getTime() - MCP_SESSION_TTL_MS).toISOString(), limit],
    );
    return rows.flatMap((row) => (row.opened_session_id === null ? [] : [row.opened_session_id]));
  }

  /**
   * The Nomos session the client's calls go to, started if need be. The first call binds a new one; concurrent
   * first calls (on any servers) agree on one, since the binding is a single conditional UPDATE; a server that
   * died after binding and before starting it leaves `started` false, and the next call starts it.
   */
  async sessionFor(session: McpSession, deps: CommandDeps, ctx: CommandContext): Promise<string> {
    let id = session.nomosSessionId;
    let started = session.started;
    if (id === null) {
      const { rows } = await this.db.query<{ nomos_session_id: string; started: boolean }>(
        `UPDATE mcp_sessions SET nomos_session_id = COALESCE(nomos_session_id, $2),
           opened_session_id = CASE WHEN nomos_session_id IS NULL THEN $2 ELSE opened_session_id END
         WHERE id = $1 RETURNING nomos_session_id, started`,
        [session.id, deps.newId()],
      );
      if (!rows[0]) throw new Error(`MCP session ${session.id} ended`);
      ({ nomos_session_id: id, started } = rows[0]);
    }
    if (!started) {
      try {
        await runSessionCommand(deps, id, { type: 'start_session', session_id: id }, ctx);
      } catch (error) {
        // Another call of this client started it first.
        if (!(error instanceof RuleViolation && error.rule === 'session_exists')) throw error;
      }
      await this.db.query('UPDATE mcp_sessions SET started = true WHERE id = $1', [session.id]);
    }
    return id;
  }

  async noteWritten(id: string, position: number): Promise<void> {
    await this.db.query('UPDATE mcp_sessions SET last_position = GREATEST(last_position, $2) WHERE id = $1', [id, position]);
  }

  /**
   * Attaches the client to an existing Nomos session (a call's session_id argument): its later calls go there. An
   * agent attaches only to a session it owns, so that no later call of it lands in another's.
   */
  async attach(session: McpSession, deps: CommandDeps, sessionId: string, ctx: CommandContext): Promise<string> {
    const state = await loadSession(deps.store, sessionId);
    if (state.status === 'none') throw new RuleViolation('session_not_found', `There is no session ${sessionId}; leave session_id out to work in this client's own session.`);
    if (state.status === 'deleted') throw new RuleViolation('session_deleted', `Session ${sessionId} was deleted; leave session_id out to work in this client's own session.`);
    requireWriter(state, commandMetadata(deps, ctx));
    await this.db.query('UPDATE mcp_sessions SET nomos_session_id = $2, started = true WHERE id = $1', [session.id, sessionId]);
    return sessionId;
  }
}
