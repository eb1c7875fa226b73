// The operator's policy deciding real runs on a real SSH server (OpenSSH when the machine has it, as CI does), on
// both databases: an applied allow rule makes the next matching run run at once — through sudo and sh -c — with
// the rule on its events, its execution row and the reply; a deny rule refuses with nothing run; an ask rule asks
// even for a read and even inside an assent window, the approval naming the rule; the floor turns an allow over
// code it cannot see into ask; a candidate in shadow is recorded, never obeyed, listed where it diverged, then
// promoted (or dropped) in one call; POST /classify, classify_command and POST /policy/check agree with run.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { SshExecutor } from '../../src/adapters/ssh/executor.ts';
import { classify, RULES_VERSION } from '../../src/domain/risk/index.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { type SshPeer, startSshPeer } from '../support/ssh-peer.ts';
import { until } from '../support/until.ts';

const OP = 'operator-token-0123456789abcdef-0123';
const AGENT = 'agent-token-0123456789abcdef-012345';
const AUDIT = 'auditor-token-0123456789abcdef-0123';
const tokens = parseTokens(`operator:alice:${OP},agent:bot:${AGENT},auditor:carol:${AUDIT}`);
const as = (token: string, more: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...more });

const scratch = `/tmp/nomos-policy-run-${randomUUID()}`;

const POLICY = {
  rules: [
    {
      id: 'touch-scratch',
      match: ['touch'],
      targets: ['host:peer'],
      decision: 'allow',
      justification: 'marking files in the scratch directory is routine',
      examples: { match: ['touch /tmp/x', "sudo sh -c 'touch /tmp/x'"], not_match: ['touchy /tmp/x'] },
    },
    { id: 'no-mkdir', match: ['mkdir'], decision: 'deny', justification: 'directories are made by the provisioning, not by hand', examples: { match: ['sudo mkdir -p /srv/x'] } },
    { id: 'ask-root-listing', match: ['ls', '/root'], decision: 'ask', justification: "root's home is private: someone looks first" },
    { id: 'python-tools', match: ['python3'], decision: 'allow', justification: 'our scripts are python' },
  ],
};

describe.each(databases)('the policy deciding runs on $name', (database) => {
  let peer: SshPeer;
  let server: TestServer;
  let session: string;

  const head = async () => (await server.runtime.store.head()).position;
  const run = async (target: string, command: string, inSession = session) => {
    const res = await server.request('POST', `/sessions/${inSession}/commands`, { type: 'run', target, command }, as(AGENT));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const eventsOf = async (executionId: string) => {
    const events: any[] = (await server.request('GET', `/sessions/${session}/events`, undefined, as(AUDIT))).body.events;
    return events.filter((e) => e.data.execution_id === executionId);
  };
  const executionRow = (id: string, status: string) =>
    until(`execution ${id} ${status}`, async () => {
      const r = await server.request('GET', `/executions/${id}`, undefined, as(AUDIT));
      return r.body.status === status ? r.body : undefined;
    });

  beforeAll(async () => {
    peer = await startSshPeer();
    server = await startTestServer(database, { tokens, executor: new SshExecutor({ privateKey: peer.privateKey }), execution: { shortWaitMs: 5_000, approvalTtlMs: 60_000 } });
    const reg = await server.request('POST', '/entities', {
      entities: [
        { slug: 'host:peer', type: 'host', ssh: { host: peer.host.address, port: peer.host.port, user: peer.host.user } },
        { slug: 'lxc:box', type: 'lxc', parent: 'host:peer', pve_id: 132 },
      ],
    }, as(OP));
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    session = (await server.request('POST', '/sessions', undefined, as(AGENT))).body.session_id;
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await peer?.close();
    rmSync(scratch, { force: true, recursive: true });
    rmSync(`${scratch}-denied`, { force: true, recursive: true });
  });

  it('without a policy, the classifier decides and says so on the verdict', async () => {
    const res = await run('host:peer', `touch ${scratch}-before`);
    expect(res).toMatchObject({ status: 'approval_required', verdict: { risk_class: 'config_mutation', decision: 'ask', rule_id: 'classifier', policy_version: 0 } });
    expect(existsSync(`${scratch}-before`)).toBe(false);
  });

  it('an applied allow rule makes the next matching run run at once on the real host, through sudo and sh -c, with its rule on the events', async () => {
    const applied = await server.request('PUT', '/policy', POLICY, as(OP, { 'if-match': '0' }));
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect(applied.body.version).toBe(1);

    const res = await run('host:peer', `sh -c 'touch ${scratch}-allowed'`);
    expect(res, JSON.stringify(res)).toMatchObject({ status: 'succeeded', exit_code: 0, verdict: { risk_class: 'config_mutation', decision: 'allow', rule_id: 'touch-scratch', policy_version: 1 } });
    expect(existsSync(`${scratch}-allowed`)).toBe(true);
    const events = await eventsOf(res.execution_id);
    expect(events.map((e) => e.type)).toEqual(['ExecutionRequested', 'ExecutionStarted', 'ExecutionSucceeded']);
    expect(events[0].data.verdict).toMatchObject({ decision: 'allow', rule_id: 'touch-scratch', policy_version: 1 });
    const row = await executionRow(res.execution_id, 'succeeded');
    expect(row).toMatchObject({ decision: 'allow', rule_id: 'touch-scratch', policy_version: 1 });
    // The request's judgement is kept for the what-if: the classifier's verdict alone, and the parts it judged.
    const kept = await until('the judgement kept', async () => {
      const { rows } = await server.runtime.db.query<{ verdict: any; parts: any[]; rules_version: number }>(
        'SELECT verdict, parts, rules_version FROM command_judgements WHERE command_sha256 = $1',
        [createHash('sha256').update(`sh -c 'touch ${scratch}-allowed'`).digest('hex')],
      );
      return rows[0];
    });
    expect(kept.rules_version).toBe(RULES_VERSION);
    expect(kept.verdict).toEqual(classify(`sh -c 'touch ${scratch}-allowed'`));
    expect(kept.parts.map((p: any) => p.argv)).toContainEqual(['touch', `${scratch}-allowed`]);

    // The rule holds on host:peer only: in the container the classifier decides again.
    const elsewhere = await run('lxc:box', `touch ${scratch}-in-box`);
    expect(elsewhere).toMatchObject({ status: 'approval_required', verdict: { decision: 'ask', rule_id: 'classifier', policy_version: 1 } });
    // A part no rule covers keeps the classifier's say over the whole command.
    const beside = await run('host:peer', `touch ${scratch}-beside && chmod 600 ${scratch}-beside`);
    expect(beside).toMatchObject({ status: 'approval_required', verdict: { decision: 'ask', rule_id: 'classifier' } });
    expect(existsSync(`${scratch}-beside`)).toBe(false);
  });

  it('a deny rule refuses the command however it is wrapped, with nothing run and nobody asked', async () => {
    for (const command of [`mkdir -p ${scratch}-denied`, `sudo mkdir -p ${scratch}-denied`, `echo go && sh -c "mkdir -p ${scratch}-denied"`, `pct exec 132 -- mkdir ${scratch}-denied`]) {
      const before = await head();
      const res = await run('host:peer', command);
      expect(res, command).toMatchObject({ status: 'refused', reason: 'policy_denied', verdict: { decision: 'deny', rule_id: 'no-mkdir', policy_version: 1 } });
      expect(res.detail).toContain('no-mkdir');
      expect(res.approval_id).toBeUndefined();
      const events = await eventsOf(res.execution_id);
      expect(events.map((e) => e.type)).toEqual(['ExecutionRequested', 'ExecutionRefused']);
      expect(await head()).toBe(before + 2);
    }
    expect(existsSync(`${scratch}-denied`)).toBe(false);
  });

  it('an ask rule asks even for a read and inside an assent window, and the approval names its rule', async () => {
    // A session of its own: its window stays open.
    const windowed = (await server.request('POST', '/sessions', undefined, as(AGENT))).body.session_id;
    const assent = await server.request('POST', `/sessions/${windowed}/assent`, { minutes: 5, for: 'agent:bot' }, as(OP));
    expect(assent.status, JSON.stringify(assent.body)).toBe(200);
    const res = await run('host:peer', 'ls /root', windowed);
    expect(res).toMatchObject({ status: 'approval_required', verdict: { risk_class: 'reversible_low', decision: 'ask', rule_id: 'ask-root-listing' } });
    expect(res.hint).toContain('ask-root-listing');
    const approval = await until('the approval row', async () => {
      const r = await server.request('GET', '/approvals?status=pending', undefined, as(AUDIT));
      return r.body.approvals.find((a: any) => a.id === res.approval_id);
    });
    expect(approval).toMatchObject({ rule_id: 'ask-root-listing', policy_version: 1 });
    // Where the classifier decides, the window still lets a config_mutation through.
    const through = await run('lxc:box', `chmod 600 ${scratch}-allowed`, windowed);
    expect(through).toMatchObject({ verdict: { decision: 'ask', rule_id: 'classifier' } });
    expect(through.status).not.toBe('approval_required');
  });

  it('the floor turns an allow over code the classifier cannot see into ask', async () => {
    const res = await run('host:peer', `python3 -c 'open("${scratch}-python", "w")'`);
    expect(res).toMatchObject({ status: 'approval_required', verdict: { decision: 'ask', rule_id: 'floor', policy_version: 1 } });
    expect(res.hint).toMatch(/^destructive \(the policy allows it, but never what the classifier judges destructive or cannot see\): waiting for an operator/);
    expect(existsSync(`${scratch}-python`)).toBe(false);
    // A plain script run is what the rule allows.
    const script = await run('host:peer', 'python3 --version');
    expect(script).toMatchObject({ status: 'succeeded', verdict: { decision: 'allow', rule_id: 'python-tools' } });
  });

  it('POST /classify, classify_command and POST /policy/check give the decision run gives', async () => {
    const command = `sudo touch ${scratch}-check`;
    const classified = await server.request('POST', '/classify', { command, target: 'host:peer' }, as(AGENT));
    expect(classified.body).toMatchObject({ risk_class: 'config_mutation', decision: 'allow', rule_id: 'touch-scratch', policy_version: 1 });
    const tool = await server.request('POST', `/sessions/${session}/commands`, { type: 'classify_command', command, target: 'host:peer' }, as(AGENT));
    expect(tool.body).toMatchObject({ decision: 'allow', rule_id: 'touch-scratch', policy_version: 1 });
    const check = await server.request('POST', '/policy/check', { command, target: 'host:peer' }, as(AUDIT));
    expect(check.body).toMatchObject({ decision: 'allow', rule_id: 'touch-scratch', policy_version: 1 });
    // Without a target only the rules that hold everywhere apply: touch-scratch holds on host:peer only.
    const anywhere = await server.request('POST', '/classify', { command: `mkdir ${scratch}-x` }, as(AGENT));
    expect(anywhere.body).toMatchObject({ decision: 'deny', rule_id: 'no-mkdir' });
    const noTarget = await server.request('POST', '/classify', { command }, as(AGENT));
    expect(noTarget.body).toMatchObject({ decision: 'ask', rule_id: 'classifier' });
  });

  it('a candidate in shadow is recorded beside every decision, never obeyed; its divergences listed; promoted in one call', async () => {
    expect((await server.request('GET', '/policy/shadow', undefined, as(AUDIT))).body).toEqual({ shadow: null, decided: 0, diverged: 0, divergences: [] });
    const candidate = {
      rules: [...POLICY.rules, { id: 'chmod-scratch', match: ['chmod', '600'], targets: ['host:peer'], decision: 'allow', justification: 'tightening modes is routine' }],
    };
    const started = await server.request('PUT', '/policy/shadow', candidate, as(OP));
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body).toMatchObject({ shadow: 1, unchanged: false });

    const obeyed = await run('host:peer', `chmod 600 ${scratch}-allowed`);
    expect(obeyed).toMatchObject({ status: 'approval_required', verdict: { decision: 'ask', rule_id: 'classifier', policy_version: 1 } });
    const same = await run('host:peer', `touch ${scratch}-allowed`);
    expect(same).toMatchObject({ status: 'succeeded', verdict: { rule_id: 'touch-scratch' } });
    const [requested] = await eventsOf(obeyed.execution_id);
    expect(requested.data.shadow).toEqual({ shadow: 1, decision: 'allow', rule_id: 'chmod-scratch' });

    const shadow = await until('both decisions projected', async () => {
      const r = await server.request('GET', '/policy/shadow', undefined, as(AUDIT));
      return r.body.decided === 2 ? r.body : undefined;
    });
    expect(shadow).toMatchObject({ shadow: { shadow: 1, digest: started.body.digest }, decided: 2, diverged: 1 });
    expect(shadow.divergences).toEqual([
      expect.objectContaining({ execution_id: obeyed.execution_id, target: 'host:peer', decision: 'ask', rule_id: 'classifier', shadow_decision: 'allow', shadow_rule_id: 'chmod-scratch' }),
    ]);

    // Agents and auditors may not touch the shadow; nothing is appended.
    const before = await head();
    for (const token of [AGENT, AUDIT]) {
      expect((await server.request('PUT', '/policy/shadow', candidate, as(token))).status).toBe(403);
      expect((await server.request('POST', '/policy/shadow/promote', {}, as(token))).status).toBe(403);
      expect((await server.request('DELETE', '/policy/shadow', undefined, as(token))).status).toBe(403);
    }
    expect((await server.request('POST', '/policy/shadow/promote', {}, as(OP, { 'if-match': '0' }))).status).toBe(409);
    expect(await head()).toBe(before);

    const promoted = await server.request('POST', '/policy/shadow/promote', {}, as(OP, { 'if-match': '1' }));
    expect(promoted.status, JSON.stringify(promoted.body)).toBe(200);
    expect(promoted.body).toMatchObject({ shadow: 1, version: 2, digest: started.body.digest });
    expect((await server.request('GET', '/policy', undefined, as(AUDIT))).body).toMatchObject({ version: 2, digest: started.body.digest });
    expect((await server.request('GET', '/policy/shadow', undefined, as(AUDIT))).body.shadow).toBeNull();
    const now = await run('host:peer', `chmod 600 ${scratch}-allowed`);
    expect(now).toMatchObject({ status: 'succeeded', verdict: { decision: 'allow', rule_id: 'chmod-scratch', policy_version: 2 } });

    // Nothing in shadow: promote and drop answer 409 and append nothing.
    const after = await head();
    const drop = await server.request('DELETE', '/policy/shadow', undefined, as(OP));
    expect(drop.status).toBe(409);
    expect(drop.body.code).toBe('no_shadow_policy');
    expect(await head()).toBe(after);
    // A bad candidate is a 400 naming the rule, nothing appended.
    const bad = await server.request('PUT', '/policy/shadow', { rules: [{ id: 'x', match: ['rm'], decision: 'allow', justification: 'no', examples: { match: ['rm -rf /'] } }] }, as(OP));
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_policy');
    expect(await head()).toBe(after);
    // Dropped: started again and dropped in one call.
    expect((await server.request('PUT', '/policy/shadow', POLICY, as(OP))).body.shadow).toBe(2);
    expect((await server.request('DELETE', '/policy/shadow', undefined, as(OP))).body).toMatchObject({ shadow: 2 });
    expect((await server.request('GET', '/policy', undefined, as(AUDIT))).body.version).toBe(2);
  });
});
