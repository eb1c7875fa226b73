// POST /policy/what-if over real HTTP on both databases, with a history made through the real command path: a
// chown an operator denied and a restart whose run failed, both newly allowed by the candidate and flagged; a read
// the candidate would refuse, in a session since deleted (still history); a policy change mid-history, after which
// the restart ran under the rule that allowed it (so unchanged), counted under the version in force then. Auditors
// may ask, agents may not (403); a candidate that does not load answers 400 invalid_policy; nothing is appended.
// Each command's judgement is kept by its sha256 for this RULES_VERSION, read back, and another version's ignored.
import { createHash } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { whatIf as whatIfAlone, whatIfEach } from '../../src/commands/policy-what-if.ts';
import { loadPolicy } from '../../src/domain/policy/index.ts';
import { RULES_VERSION } from '../../src/domain/risk/index.ts';
import type { Executor } from '../../src/ports/executor.ts';
import { databases } from '../support/databases.ts';
import { STAND_IN_HOST_KEY } from '../support/instant-executor.ts';
import { PENDING_COMMAND, pendingApproval } from '../support/pending-approval.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

const OPERATOR = { 'x-nomos-actor': 'operator:alice' };
const AUDITOR = { 'x-nomos-actor': 'auditor:carol' };
const AGENT = { 'x-nomos-actor': 'agent:bot' };
const RESTART = 'systemctl restart rclone-backup';
const READ = 'cat /etc/hostname';
const LATER_CHOWN = 'chown :0 /srv/other';

/** A fleet stand-in whose restarts fail (exit 1); everything else succeeds at once. */
function failingRestarts(): Executor {
  return {
    start: (_target, command) => {
      const exitCode = command.includes('restart') ? 1 : 0;
      return Promise.resolve({
        hostKey: STAND_IN_HOST_KEY,
        result: Promise.resolve({ exitCode, signal: null, stdoutTail: '', stderrTail: exitCode === 0 ? '' : 'Job failed\n', timedOut: false }),
        output: () => ({ stdout: '', stderr: '' }),
        idleMs: () => 0,
        probe: () => Promise.resolve('exited' as const),
        kill: () => Promise.resolve(),
      });
    },
    close: () => Promise.resolve(),
  };
}

const ALLOW_RESTART = {
  id: 'rclone-restart',
  match: ['systemctl', 'restart', 'rclone-backup'],
  targets: ['lxc:*'],
  decision: 'allow',
  justification: 'restarting the backup unit is routine',
  examples: { match: [RESTART], not_match: ['systemctl stop rclone-backup'] },
};
const ALLOW_CHOWN = { id: 'chown-data', match: ['chown'], targets: ['lxc:*'], decision: 'allow', justification: 'ownership fixes are routine', examples: { match: [PENDING_COMMAND] } };
const DENY_CAT = { id: 'no-cat', match: ['cat'], decision: 'deny', justification: 'for the test' };
const CANDIDATE = { rules: [ALLOW_RESTART, ALLOW_CHOWN, DENY_CAT] };
const CANDIDATE_YAML = `policy:
  rules:
    - id: rclone-restart
      match: [systemctl, restart, rclone-backup]
      targets: ["lxc:*"]
      decision: allow
      justification: restarting the backup unit is routine
    - {id: chown-data, match: [chown], targets: ["lxc:*"], decision: allow, justification: ownership fixes are routine}
    - {id: no-cat, match: [cat], decision: deny, justification: for the test}
`;

describe.each(databases)('POST /policy/what-if on $name', (database) => {
  let server: TestServer;
  const ids = { denied: '', failed: '', read: '', underRule: '', later: '' };
  const head = async () => (await server.runtime.store.head()).position;
  const whatIf = (body: unknown, headers: Record<string, string> = OPERATOR) => server.request('POST', '/policy/what-if', body, headers);

  const run = async (session: string, command: string) => {
    const res = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target: 'lxc:box', command }, OPERATOR);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { execution_id: string; approval_id?: string; status: string };
  };
  const settled = (id: string, status: string) =>
    until(`execution ${id} ${status}`, async () => {
      const r = await server.request('GET', `/executions/${id}?include_deleted=true`, undefined, OPERATOR);
      return r.body?.status === status ? r.body : undefined;
    });

  beforeAll(async () => {
    server = await startTestServer(database, { executor: failingRestarts() });
    // Before any policy: a chown an operator denies, a restart approved that fails, a read in a session deleted since.
    const pending = await pendingApproval(server, 'fix the backup');
    ids.denied = pending.execution_id;
    expect((await server.request('POST', `/approvals/${pending.approval_id}/deny`, { reason: 'not during the backup window' }, OPERATOR)).status).toBe(200);
    await settled(ids.denied, 'denied');
    const restart = await run(pending.session, RESTART);
    ids.failed = restart.execution_id;
    expect(restart.status).toBe('approval_required');
    expect((await server.request('POST', `/approvals/${restart.approval_id}/approve`, undefined, OPERATOR)).status).toBe(200);
    await settled(ids.failed, 'failed');
    const other = (await server.request('POST', '/sessions', undefined, OPERATOR)).body.session_id as string;
    ids.read = (await run(other, READ)).execution_id;
    await settled(ids.read, 'succeeded');
    expect((await server.request('DELETE', `/sessions/${other}`, { reason: 'done' }, OPERATOR)).status).toBe(200);

    // Version 1 allows the restart; the next one runs under it (at once, or approved where run does not yet consult it).
    expect((await server.request('PUT', '/policy', { rules: [ALLOW_RESTART] }, OPERATOR)).body).toMatchObject({ version: 1 });
    const underRule = await run(pending.session, RESTART);
    ids.underRule = underRule.execution_id;
    if (underRule.status === 'approval_required') await server.request('POST', `/approvals/${underRule.approval_id}/approve`, undefined, OPERATOR);
    await settled(ids.underRule, 'failed');
    ids.later = (await run(pending.session, LATER_CHOWN)).execution_id;
    await settled(ids.later, 'awaiting_approval');
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('counts every execution under the version in force then, and flags the denied and the failed that would now run', async () => {
    const before = await head();
    const res = await whatIf({ policy: CANDIDATE });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const body = res.body;
    expect(body.replayed).toBe(5);
    expect(Date.parse(body.from)).toBeLessThanOrEqual(Date.parse(body.to));
    // chown (denied), restart (failed) and the later chown would run at once; the read would be refused; the
    // restart requested under version 1 was allowed then and is now: unchanged.
    expect(body.changes).toEqual({ unchanged: 1, newly_allowed: 3, newly_asked: 0, newly_denied: 1 });
    expect(body.samples.newly_allowed.map((s: any) => s.execution_id)).toEqual([ids.later, ids.failed, ids.denied]);
    expect(body.samples.newly_denied).toEqual([
      expect.objectContaining({ execution_id: ids.read, command: READ, target: 'lxc:box', decision_then: 'allow', decision_now: 'deny', rule_id: 'no-cat', decided_by: null, outcome: 'succeeded' }),
    ]);
    expect(body.flags.allowed_once_denied).toEqual([
      {
        execution_id: ids.denied, session_id: expect.any(String), target: 'lxc:box', command: PENDING_COMMAND, at: expect.any(String),
        decision_then: 'ask', decision_now: 'allow', rule_id: 'chown-data', policy_version_then: 0, decided_by: { role: 'operator', id: 'alice' }, outcome: 'denied',
      },
    ]);
    expect(body.flags.allowed_once_failed).toEqual([
      expect.objectContaining({ execution_id: ids.failed, command: RESTART, decision_then: 'ask', decided_by: { role: 'operator', id: 'alice' }, outcome: 'failed', policy_version_then: 0 }),
    ]);
    expect(body.flag_counts).toEqual({ allowed_once_denied: 1, allowed_once_failed: 1 });
    expect(await head()).toBe(before);
  });

  it('replays a candidate that drops the rule in force: what ran under it is newly asked', async () => {
    const res = await whatIf({ policy: { rules: [{ id: 'unrelated', match: ['pct', 'list'], decision: 'allow', justification: 'for the test' }] } }, AUDITOR);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.changes).toEqual({ unchanged: 4, newly_allowed: 0, newly_asked: 1, newly_denied: 0 });
    expect(res.body.samples.newly_asked).toEqual([expect.objectContaining({ execution_id: ids.underRule, decision_then: 'allow', decision_now: 'ask', rule_id: 'classifier', policy_version_then: 1 })]);
    expect(res.body.flags).toEqual({ allowed_once_denied: [], allowed_once_failed: [] });
  });

  it("keeps each command's judgement for this version of the classifier's rules, reads it back, and ignores another version's", async () => {
    const db = server.runtime.db;
    const kept = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM command_judgements WHERE rules_version = $1', [RULES_VERSION])).rows[0]!.n;
    expect(await kept()).toBe(4);
    const key = createHash('sha256').update(READ).digest('hex');
    // Read back by key: a judgement kept as a mutation makes the read one no rule can match, as asked then and now.
    const mutation = { risk_class: 'config_mutation', reason: 'kept', rule: 'kept', inner_commands: [] };
    await db.query('UPDATE command_judgements SET verdict = $2::jsonb, parts = $3::jsonb WHERE command_sha256 = $1', [key, JSON.stringify(mutation), '[]']);
    expect((await whatIf({ policy: CANDIDATE })).body.changes).toEqual({ unchanged: 2, newly_allowed: 3, newly_asked: 0, newly_denied: 0 });
    // Kept under another version of the rules: not read, and judged again.
    await db.query('UPDATE command_judgements SET rules_version = $2 WHERE command_sha256 = $1', [key, RULES_VERSION - 1]);
    expect((await whatIf({ policy: CANDIDATE })).body.changes).toEqual({ unchanged: 1, newly_allowed: 3, newly_asked: 0, newly_denied: 1 });
    expect(await kept()).toBe(4);
  });

  it('answers several candidates over one scan as it answers each alone', async () => {
    const loaded = (document: unknown) => {
      const result = loadPolicy(document);
      if (!result.ok) throw new Error(JSON.stringify(result.problems));
      return result.policy;
    };
    const candidates = [loaded(CANDIDATE), loaded({ rules: [DENY_CAT] })];
    const { commandDeps, classifier } = server.runtime;
    const each = await whatIfEach(commandDeps, classifier, candidates);
    expect(each).toEqual(await Promise.all(candidates.map((candidate) => whatIfAlone(commandDeps, classifier, candidate))));
    expect(each.map((r) => r.changes.newly_denied)).toEqual([1, 1]);
  });

  it('takes the candidate as YAML too, answering the same', async () => {
    const json = await whatIf({ policy: CANDIDATE });
    const yaml = await whatIf(CANDIDATE_YAML, { ...OPERATOR, 'content-type': 'application/yaml' });
    expect(yaml.status, JSON.stringify(yaml.body)).toBe(200);
    expect(yaml.body.changes).toEqual(json.body.changes);
    expect(yaml.body.flags).toEqual(json.body.flags);
  });

  it('refuses an agent (403), and answers a candidate that does not load 400 invalid_policy, appending nothing', async () => {
    const before = await head();
    const agent = await whatIf({ policy: CANDIDATE }, AGENT);
    expect(agent.status).toBe(403);
    expect(agent.body.code).toBe('forbidden');
    const overFloor = { rules: [{ id: 'wipe', match: ['rm'], decision: 'allow', justification: 'x', examples: { match: ['rm -rf /srv/x'] } }] };
    const bad: Array<[string, unknown, RegExp]> = [
      ['an allow over the floor', { policy: overFloor }, /rule wipe: example "rm -rf \/srv\/x": an allow rule cannot cover/],
      ['a failing example', { policy: { rules: [{ ...ALLOW_RESTART, examples: { match: ['systemctl stop rclone-backup'] } }] } }, /rule rclone-restart: example "systemctl stop rclone-backup": the rule does not match/],
      ['no rules array', { policy: { policies: [] } }, /rules/],
    ];
    for (const [what, body, message] of bad) {
      const res = await whatIf(body);
      expect(res.status, what).toBe(400);
      expect(res.body.code, what).toBe('invalid_policy');
      expect(res.body.detail, what).toMatch(message);
      expect(res.body.problems.length, what).toBeGreaterThan(0);
    }
    const missing = await whatIf({ rules: [ALLOW_RESTART] });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('validation_failed');
    const broken = await whatIf('rules:\n  - id: x\n    match: [systemctl\n', { ...OPERATOR, 'content-type': 'application/yaml' });
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ code: 'invalid_yaml', detail: expect.stringMatching(/line \d+/) });
    expect(await head()).toBe(before);
  });

  it('answers as the OpenAPI document says: the 200, and a refusal as problem+json', async () => {
    const doc = (await server.request('GET', '/openapi.json', undefined, AUDITOR)).body;
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    ajvFormats.default(ajv);
    const rebased = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"urn:nomos:components#/$defs/')) as object;
    ajv.addSchema({ $id: 'urn:nomos:components', $defs: rebased(doc.components?.schemas ?? {}) });
    const responses = doc.paths['/policy/what-if'].post.responses;
    expect(Object.keys(responses['200'].content['application/json'].schema.properties)).toEqual(expect.arrayContaining(['replayed', 'from', 'to', 'changes', 'samples', 'flags']));
    for (const [status, res, media] of [['200', await whatIf({ policy: CANDIDATE }), 'application/json'], ['403', await whatIf({ policy: CANDIDATE }, AGENT), 'application/problem+json']] as const) {
      expect(res.status).toBe(Number(status));
      const validate = ajv.compile(rebased(responses[status].content[media].schema));
      expect(validate(res.body), ajv.errorsText(validate.errors)).toBe(true);
    }
  });
});
