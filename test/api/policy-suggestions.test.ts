// GET /policy/suggestions over real HTTP on both databases, from approvals made through the real command path (an
// agent's run, an operator's approve or deny, a grant too late that expires): the narrowest rule over commands
// approved again and again, never covering the denied neighbour (which it names in not_match), nothing for a command
// with a failed run (approved, or run unasked under an assent window), a destructive one, one approved fewer than N
// times or one whose words start a denied command; its evidence and its what-if; agents refused; and, once adopted
// with PUT /policy, the command runs unasked.
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { judgedParts } from '../../src/domain/risk/index.ts';
import { loadPolicy, ruleMatches } from '../../src/domain/policy/index.ts';
import type { Executor } from '../../src/ports/executor.ts';
import { databases } from '../support/databases.ts';
import { STAND_IN_HOST_KEY } from '../support/instant-executor.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const OP = 'operator-token-0123456789abcdef-0123';
const AGENT = 'agent-token-0123456789abcdef-012345';
const AUDIT = 'auditor-token-0123456789abcdef-0123';
const tokens = parseTokens(`operator:alice:${OP},agent:bot:${AGENT},auditor:carol:${AUDIT}`);
const as = (token: string) => ({ authorization: `Bearer ${token}` });

const TTL_MS = 4_000;
const MERGED = 'suggested-systemctl-reload-restart-rclone-backup';

/** A fleet stand-in: every command exits 0 at once, except those in `failing`, which exit 1. */
function fleet(failing: Set<string>): Executor {
  return {
    start: (_target, command) =>
      Promise.resolve({
        hostKey: STAND_IN_HOST_KEY,
        result: Promise.resolve({ exitCode: failing.has(command) ? 1 : 0, signal: null, stdoutTail: '', stderrTail: '', timedOut: false }),
        output: () => ({ stdout: '', stderr: '' }),
        idleMs: () => 0,
        probe: () => Promise.resolve('exited' as const),
        kill: () => Promise.resolve(),
      }),
    close: () => Promise.resolve(),
  };
}

type Suggestion = { rule: { id: string; match: unknown[]; targets: string[]; examples: { match: string[]; not_match?: string[] } }; evidence: Record<string, number | null>; what_if: any };

describe.each(databases)('policy suggestions on $name', (database) => {
  let server: TestServer;
  const failing = new Set<string>();
  const sessions: string[] = [];

  /** The agent runs the command in the session; the operator decides the approval it waits for. */
  async function decided(session: string, command: string, target: string, decision: 'approve' | 'deny' | 'late'): Promise<void> {
    const run = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target, command }, as(AGENT));
    expect(run.body, JSON.stringify(run.body)).toMatchObject({ status: 'approval_required' });
    const id = run.body.approval_id as string;
    if (decision === 'late') await new Promise((resolve) => setTimeout(resolve, TTL_MS + 200));
    const path = `/approvals/${id}/${decision === 'deny' ? 'deny' : 'approve'}`;
    const answer = await server.request('POST', path, decision === 'deny' ? { reason: 'not now' } : undefined, as(OP));
    expect(answer.status, JSON.stringify(answer.body)).toBe(decision === 'late' ? 409 : 200);
    if (decision === 'late') expect(answer.body.code).toBe('approval_expired');
    await server.runtime.executions.settled();
  }
  const suggestions = async (query = '', token = AUDIT): Promise<Suggestion[]> => {
    const answer = await server.request('GET', `/policy/suggestions${query}`, undefined, as(token));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.suggestions;
  };

  beforeAll(async () => {
    server = await startTestServer(database, { tokens, executor: fleet(failing), execution: { approvalTtlMs: TTL_MS } });
    const reg = await server.request('POST', '/entities', {
      entities: [
        { slug: 'host:peer', type: 'host', ssh: { host: '127.0.0.1', port: 22, user: 'root' } },
        { slug: 'lxc:box', type: 'lxc', parent: 'host:peer', pve_id: 132 },
        { slug: 'lxc:web', type: 'lxc', parent: 'host:peer', pve_id: 133 },
      ],
    }, as(OP));
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    for (let i = 0; i < 3; i++) sessions.push((await server.request('POST', '/sessions', undefined, as(AGENT))).body.session_id as string);
    const [a, b, c] = sessions as [string, string, string];

    // Routine: the backup unit restarted in three sessions and reloaded through sudo three times in one.
    for (const s of [a, b, c]) await decided(s, 'systemctl restart rclone-backup', 'lxc:box', 'approve');
    for (let i = 0; i < 3; i++) await decided(a, 'sudo systemctl reload rclone-backup', 'lxc:box', 'approve');
    // Its denied neighbour on the same target.
    await decided(b, 'systemctl stop rclone-backup', 'lxc:box', 'deny');
    // Approved often, but one run failed.
    for (const s of [a, b, c]) await decided(s, 'systemctl restart flaky', 'lxc:box', 'approve');
    failing.add('systemctl restart flaky');
    await decided(c, 'systemctl restart flaky', 'lxc:box', 'approve');
    // Approved often, but destructive.
    for (const s of [a, b, c]) await decided(s, 'rm -rf /srv/cache', 'lxc:box', 'approve');
    // Approved often, but the words start a command denied there.
    for (const s of [a, b, c]) await decided(s, 'systemctl restart nginx', 'lxc:web', 'approve');
    await decided(a, 'systemctl restart nginx --force', 'lxc:web', 'deny');
    // Approved twice only.
    for (const s of [a, b]) await decided(s, 'chown :0 /srv/data', 'lxc:box', 'approve');
    // Approved every time it was asked, but it failed once when it ran unasked, under an assent window.
    for (const s of [a, b, c]) await decided(s, 'systemctl restart cron', 'lxc:box', 'approve');
    const assented = (await server.request('POST', '/sessions', undefined, as(AGENT))).body.session_id as string;
    expect((await server.request('POST', `/sessions/${assented}/assent`, { minutes: 30 }, as(OP))).status).toBe(200);
    failing.add('systemctl restart cron');
    const unasked = await server.request('POST', `/sessions/${assented}/commands`, { type: 'run', target: 'lxc:box', command: 'systemctl restart cron' }, as(AGENT));
    expect(unasked.body, JSON.stringify(unasked.body)).toMatchObject({ status: 'failed' });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it('suggests the narrowest rule over the routine commands, and nothing else', async () => {
    const found = await suggestions();
    expect(found.map((s) => s.rule.id)).toEqual([MERGED]);
    const [{ rule, evidence }] = found as [Suggestion];
    expect(rule).toMatchObject({ match: ['systemctl', ['reload', 'restart'], 'rclone-backup'], targets: ['lxc:box'], decision: 'allow' });
    expect(rule.examples.match).toEqual(expect.arrayContaining(['systemctl restart rclone-backup', 'sudo systemctl reload rclone-backup']));
    expect(evidence).toMatchObject({ approvals: 6, denials: 0, sessions: 3, expired: 0 });
    expect(evidence.median_wait_s).toBeGreaterThanOrEqual(0);
    expect((await suggestions('?min_approvals=2')).map((s) => s.rule.id)).toEqual([MERGED, 'suggested-chown-0-srv-data']);
    expect(await suggestions('?min_approvals=7')).toEqual([]);
  });

  it('never covers the denied neighbour: it is named in not_match, the rule does not match it, and the rule loads', async () => {
    const [{ rule }] = (await suggestions()) as [Suggestion];
    expect(rule.examples.not_match).toEqual(['systemctl stop rclone-backup']);
    expect(judgedParts('systemctl stop rclone-backup').some((part) => ruleMatches({ match: rule.match as string[], decision: 'allow' }, part))).toBe(false);
    const current = (await server.request('GET', '/policy', undefined, as(AUDIT))).body;
    expect(loadPolicy({ rules: [...current.rules, rule] }).ok).toBe(true);
  });

  it("carries the what-if of the policy in force with the rule: the approved and expired runs newly allowed, nothing else, nothing flagged", async () => {
    await decided(sessions[1]!, 'systemctl restart rclone-backup', 'lxc:box', 'late');
    const [{ evidence, what_if }] = (await suggestions()) as [Suggestion];
    expect(evidence).toMatchObject({ approvals: 6, expired: 1 });
    expect(what_if.changes).toEqual({ unchanged: what_if.replayed - 7, newly_allowed: 7, newly_asked: 0, newly_denied: 0 });
    expect(what_if.flag_counts).toEqual({ allowed_once_denied: 0, allowed_once_failed: 0 });
    expect(what_if.samples.newly_allowed.map((s: { command: string }) => s.command)).toEqual(expect.arrayContaining(['systemctl restart rclone-backup']));
  }, 30_000);

  it('answers operators and auditors, refuses an agent, and checks its parameters', async () => {
    expect((await suggestions('', OP)).map((s) => s.rule.id)).toEqual([MERGED]);
    const agent = await server.request('GET', '/policy/suggestions', undefined, as(AGENT));
    expect(agent.status).toBe(403);
    expect(agent.body.code).toBe('forbidden');
    for (const query of ['?min_approvals=0', '?min_approvals=x', '?limit=0', '?other=1']) {
      expect((await server.request('GET', `/policy/suggestions${query}`, undefined, as(OP))).status, query).toBe(400);
    }
  });

  it('answers as /openapi.json says it does', async () => {
    const doc = (await server.request('GET', '/openapi.json', undefined, as(AUDIT))).body;
    const operation = doc.paths['/policy/suggestions'].get;
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '503']));
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    ajvFormats.default(ajv);
    const validate = ajv.compile(operation.responses['200'].content['application/json'].schema);
    const answer = await server.request('GET', '/policy/suggestions', undefined, as(AUDIT));
    expect(answer.body.suggestions).toHaveLength(1);
    expect(validate(answer.body), ajv.errorsText(validate.errors)).toBe(true);
  });

  it('once adopted with PUT /policy, the command runs unasked under the rule, and is suggested no more', async () => {
    const [{ rule }] = (await suggestions()) as [Suggestion];
    const current = (await server.request('GET', '/policy', undefined, as(OP))).body;
    const put = await server.request('PUT', '/policy', { rules: [...current.rules, rule] }, { ...as(OP), 'if-match': String(current.version) });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const check = await server.request('POST', '/policy/check', { command: 'sudo systemctl restart rclone-backup', target: 'lxc:box' }, as(AGENT));
    expect(check.body).toMatchObject({ decision: 'allow', rule_id: MERGED });
    expect(await suggestions()).toEqual([]);
  });
});
