// The session-review protocol of the system Nomos replaces (its .agents/skills/session-review/SKILL.md), as an
// MCP prompt: compare what was asked with what came of it, find why it went wrong, propose fixes. The old skill
// had the reviewer pull whole transcripts with curl and count by hand; here the prompt carries the read models'
// facts instead — the session's aggregates and derived blocker, its tool calls by name with the repeated and
// failed ones, its executions and approvals — so the review reads what the system measured, not a transcript.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, type GetPromptResult, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ToolServices } from '../agent/tools.ts';
import type { Queryable } from '../ports/db.ts';
import { listApprovals, listSessionExecutions } from '../projections/executions.ts';
import { getPlan } from '../projections/plans.ts';
import { type SessionView, getSession, listSessions } from '../projections/sessions.ts';
import { getToolCalls } from '../projections/transcript.ts';

const RECENT = 10;
const CUT = 300;

const PROTOCOL = `Review Nomos sessions: compare each session's objective with its outcome, find the causes of failure, and propose concrete fixes.

For each session below determine:
| Dimension | Check |
|---|---|
| Objective | What was asked (goal; goals superseded along the way)? |
| Outcome | Achieved? outcome and summary; a session still active or with a blocker is not done. |
| Tool calls | Count, distinct tools, repetition (the same call again and again, N+1 fan-out where one bulk call would do). |
| Blockers | The derived blocker and its evidence: a pending or expired approval, a refused or failed run, a lost execution. |
| Approvals | Requested, decided by whom, expired unanswered? A read-only command should never have waited for one. |
| Executions | Failed, timed out, refused (retry cap, host key, unreachable), hung; the same command retried? |

Failure signatures, with their usual cause:
| Signature | Likely cause | Fix |
|---|---|---|
| The same command run many times | no retry discipline, or a hung command retried | the retry cap held? inspect instead of retrying |
| A read-only command waited for approval | a classifier rule too wide | a classifier rule and a test for it |
| An approval expired unanswered | nobody saw it | notifications, or a shorter plan that asks once |
| Many calls of one tool in a turn | fan-out instead of a bulk tool (inspect_path) | the prompt, or a bulk tool |
| Changed the fleet, wrote nothing back | no upsert_knowledge / update_entity_attributes | the write-back reminder, the prompt |
| Duration long while the work was short | the session stayed open: complete_task missing | complete_task |

Answer per session, in this form:
Session: {id[:8]} — "{title[:60]}"
  Tool calls: {total} across {turns} turns; top tools {name:count, …}
  Objective: {one line}
  Outcome: ✅ / ❌ / ⚠️
  Blockers: {list or "none"}
  Fixes needed: {concrete actions}
  Severity: blocker | friction | cosmetic
Then the patterns across the sessions, and the fixes in order of severity.`;

const cut = (text: string | null) => (text === null || text.length <= CUT ? text : `${text.slice(0, CUT)}… (${text.length} characters)`);

/** What the read models hold of one session, as the review needs it: counts and outliers, not the conversation. */
async function facts(db: Queryable, session: SessionView): Promise<unknown> {
  const [calls, executions, approvals, plan] = await Promise.all([getToolCalls(db, session.id), listSessionExecutions(db, session.id), listApprovals(db, { sessionId: session.id, limit: 100 }), getPlan(db, session.id)]);
  const byName = new Map<string, number>();
  const same = new Map<string, number>();
  for (const c of calls) {
    byName.set(c.name, (byName.get(c.name) ?? 0) + 1);
    const key = `${c.name} ${JSON.stringify(c.args)}`;
    same.set(key, (same.get(key) ?? 0) + 1);
  }
  return {
    session,
    goals: plan.goals,
    plan_steps: plan.steps.map((s) => ({ generation: s.generation, seq: s.seq, title: s.title, status: s.status })),
    tool_calls: {
      total: calls.length,
      by_name: Object.fromEntries([...byName].sort((a, b) => b[1] - a[1])),
      repeated: [...same].filter(([, n]) => n > 1).map(([call, times]) => ({ call: cut(call), times })),
      failed: calls.filter((c) => c.status === 'failed').map((c) => ({ seq: c.seq, name: c.name, error: cut(c.error) })),
      slowest: [...calls].sort((a, b) => (b.duration_ms ?? 0) - (a.duration_ms ?? 0)).slice(0, 3).map((c) => ({ seq: c.seq, name: c.name, duration_ms: c.duration_ms })),
      clients: [...new Set(calls.map((c) => (c.client ? `${c.client.name} ${c.client.version}` : 'built-in agent')))],
    },
    executions: executions.map((e) => ({
      target: e.target,
      command: cut(e.command),
      risk_class: e.verdict.risk_class,
      status: e.status,
      exit_code: e.exit_code,
      refusal: e.refusal,
      error: cut(e.error),
      duration_ms: e.duration_ms,
    })),
    approvals: approvals.map((a) => ({ command: cut(a.command), risk_class: a.risk_class, status: a.status, requested_at: a.requested_at, decided_by: a.decided_by, decided_at: a.decided_at, reason: a.decision_reason })),
  };
}

export function registerReviewPrompt(server: McpServer, services: ToolServices, readable: () => Promise<void>): void {
  server.registerPrompt(
    'session-review',
    {
      title: 'Review Nomos sessions',
      description: 'Compare what sessions set out to do with what came of it, name the causes of failure and propose fixes, from the read models (aggregates, blockers, tool calls, executions, approvals).',
      argsSchema: { session_id: z.string().uuid().optional().describe(`the session to review; by default the ${RECENT} most recently active`) },
    },
    async ({ session_id }): Promise<GetPromptResult> => {
      const db = services.readDb;
      await readable();
      let sessions: SessionView[];
      if (session_id !== undefined) {
        const session = await getSession(db, session_id);
        if (session === null) throw new McpError(ErrorCode.InvalidParams, `there is no session ${session_id}`);
        sessions = [session];
      } else {
        sessions = (await listSessions(db, { limit: RECENT })).sessions;
      }
      const data = await Promise.all(sessions.map((s) => facts(db, s)));
      const text = `${PROTOCOL}\n\nThe sessions (${data.length}), from Nomos's read models:\n\`\`\`json\n${JSON.stringify(data, null, 2)}\n\`\`\``;
      return { description: `Review of ${data.length === 1 ? `session ${sessions[0]!.id}` : `the ${data.length} most recently active sessions`}`, messages: [{ role: 'user', content: { type: 'text', text } }] };
    },
  );
}
