// The operator's policy over real HTTP on both databases: versions as events (JSON or YAML, the same document
// twice changes nothing), If-Match refusing a change on a stale version (two operators at once: one 409), agents
// and auditors refused on every write, bad documents (broken YAML, failing examples, an allow over the floor, bad
// shapes) answered 400 naming the rule and example with nothing appended, and POST /policy/check deciding through
// wrappers with the deciding rule and version.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const OP = 'operator-token-0123456789abcdef-0123';
const OP2 = 'operator2-token-0123456789abcdef-012';
const AGENT = 'agent-token-0123456789abcdef-012345';
const AUDIT = 'auditor-token-0123456789abcdef-0123';
const tokens = parseTokens(`operator:alice:${OP},operator:bob:${OP2},agent:bot:${AGENT},auditor:carol:${AUDIT}`);
const as = (token: string, more: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...more });

const ROUTINE = {
  id: 'rclone-restart',
  match: ['systemctl', ['restart', 'reload'], 'rclone-backup'],
  targets: ['lxc:*'],
  decision: 'allow',
  justification: 'restarting the backup unit is routine',
  examples: { match: ['systemctl restart rclone-backup', "sudo sh -c 'systemctl reload rclone-backup'"], not_match: ['systemctl restart rclone-backup-old', 'systemctl status rclone-backup'] },
};
const NO_REBOOT = { id: 'no-reboot', match: [['reboot', 'poweroff']], decision: 'deny', justification: 'reboots go through the change window', examples: { match: ['sudo reboot'] } };

const YAML_POLICY = `rules:
  - id: rclone-restart
    match: [systemctl, [restart, reload], rclone-backup]
    targets: ["lxc:*"]
    decision: allow
    justification: restarting the backup unit is routine
    examples:
      match: ["systemctl restart rclone-backup", "sudo sh -c 'systemctl reload rclone-backup'"]
      not_match: ["systemctl restart rclone-backup-old", "systemctl status rclone-backup"]
  - id: no-reboot
    match: [[reboot, poweroff]]
    decision: deny
    justification: reboots go through the change window
    examples:
      match: ["sudo reboot"]
`;

describe.each(databases)('the policy API on $name', (database) => {
  let server: TestServer;
  const head = async () => (await server.runtime.store.head()).position;
  const put = (body: unknown, headers: Record<string, string>) => server.request('PUT', '/policy', body, headers);

  beforeAll(async () => {
    server = await startTestServer(database, { tokens });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('starts with no policy: version 0, no rules, the classifier deciding', async () => {
    expect((await server.request('GET', '/policy', undefined, as(AUDIT))).body).toEqual({ version: 0, digest: null, rules: [], updated_at: null, updated_by: null });
    const check = await server.request('POST', '/policy/check', { command: 'systemctl restart rclone-backup', target: 'lxc:rclone' }, as(AGENT));
    expect(check.body).toMatchObject({ decision: 'ask', risk_class: 'config_mutation', rule_id: 'classifier', policy_version: 0 });
  });

  it('refuses every write from an agent or an auditor, appending nothing', async () => {
    const before = await head();
    for (const token of [AGENT, AUDIT]) {
      const res = await put({ rules: [ROUTINE] }, as(token));
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
    expect(await head()).toBe(before);
  });

  it('answers bad documents 400 naming each rule and example, and changes nothing', async () => {
    const before = await head();
    const bad: Array<[string, unknown, RegExp]> = [
      ['a failing example', { rules: [{ ...ROUTINE, examples: { match: ['systemctl stop rclone-backup'] } }] }, /rule rclone-restart: example "systemctl stop rclone-backup": the rule does not match/],
      ['a not_match the rule matches', { rules: [{ ...ROUTINE, examples: { not_match: ['sudo systemctl restart rclone-backup'] } }] }, /rule rclone-restart: example "sudo systemctl restart rclone-backup": the rule matches this example/],
      ['an allow over the floor', { rules: [{ id: 'wipe', match: ['rm'], decision: 'allow', justification: 'x', examples: { match: ['rm -rf /srv/x'] } }] }, /rule wipe: example "rm -rf \/srv\/x": an allow rule cannot cover/],
      ['an unknown decision', { rules: [{ ...ROUTINE, decision: 'maybe' }] }, /rule rclone-restart: rules\[0\]\.decision/],
      ['duplicate ids', { rules: [ROUTINE, { ...NO_REBOOT, id: 'rclone-restart' }] }, /duplicate id/],
      ['no rules array', { policies: [] }, /rules/],
    ];
    for (const [what, body, message] of bad) {
      const res = await put(body, as(OP));
      expect(res.status, what).toBe(400);
      expect(res.body.code, what).toBe('invalid_policy');
      expect(res.body.detail, what).toMatch(message);
      expect(res.body.problems.length, what).toBeGreaterThan(0);
    }
    const broken = await put(`rules:\n  - id: x\n    match: [systemctl\n`, as(OP, { 'content-type': 'application/yaml' }));
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ code: 'invalid_yaml', detail: expect.stringMatching(/line \d+/) });
    // Aliases that multiply: refused, not expanded.
    let laughs = 'a: &a [x, x, x, x, x, x, x, x, x, x]\n';
    for (const [i, name] of ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].entries()) laughs += `${name}: &${name} [${Array(10).fill(`*${'abcdefgh'[i]}`).join(', ')}]\n`;
    const bomb = await put(laughs, as(OP, { 'content-type': 'application/yaml' }));
    expect(bomb.status).toBe(400);
    expect(bomb.body).toMatchObject({ code: 'invalid_yaml', detail: expect.stringMatching(/alias/i) });
    // More examples than a load may check.
    const many = await put({ rules: [{ ...ROUTINE, examples: { match: Array(100).fill('systemctl restart rclone-backup') } }, ...Array.from({ length: 20 }, (_, i) => ({ ...ROUTINE, id: `r${i}`, examples: { match: Array(100).fill('systemctl restart rclone-backup') } }))] }, as(OP));
    expect(many.status).toBe(400);
    expect(many.body.detail).toMatch(/2100 examples; at most 2000/);
    const badIfMatch = await put({ rules: [ROUTINE] }, as(OP, { 'if-match': 'yesterday' }));
    expect(badIfMatch.status).toBe(400);
    expect(await head()).toBe(before);
    expect((await server.request('GET', '/policy', undefined, as(OP))).body.version).toBe(0);
  });

  it('switches a policy on as version 1, the same document again (as YAML) changing nothing', async () => {
    const applied = await put({ rules: [ROUTINE, NO_REBOOT] }, as(OP, { 'if-match': '"0"' }));
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({ version: 1, unchanged: false, digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const again = await put(YAML_POLICY, as(OP, { 'content-type': 'application/yaml' }));
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ version: 1, unchanged: true, digest: applied.body.digest });
    const current = (await server.request('GET', '/policy', undefined, as(AUDIT))).body;
    expect(current).toMatchObject({ version: 1, digest: applied.body.digest, updated_by: { role: 'operator', id: 'alice' } });
    expect(current.rules.map((r: { id: string }) => r.id)).toEqual(['rclone-restart', 'no-reboot']);
  });

  it('decides through wrappers, with the deciding rule and the version', async () => {
    const check = async (command: string, target: string) => (await server.request('POST', '/policy/check', { command, target }, as(AGENT))).body;
    for (const command of ['systemctl restart rclone-backup', "sudo sh -c 'systemctl reload rclone-backup'", 'pct exec 101 -- systemctl restart rclone-backup']) {
      expect(await check(command, 'lxc:rclone'), command).toMatchObject({ decision: 'allow', rule_id: 'rclone-restart', policy_version: 1 });
    }
    // Not its targets, nor its words: the classifier decides.
    expect(await check('systemctl restart rclone-backup', 'host:strong')).toMatchObject({ decision: 'ask', rule_id: 'classifier' });
    expect(await check('systemctl restart rclone-backup-old', 'lxc:rclone')).toMatchObject({ decision: 'ask', rule_id: 'classifier' });
    // The strictest part wins, and a deny refuses however it is wrapped.
    expect(await check('systemctl restart rclone-backup; sudo reboot', 'lxc:rclone')).toMatchObject({ decision: 'deny', rule_id: 'no-reboot' });
    expect(await check("bash -c 'poweroff'", 'host:strong')).toMatchObject({ decision: 'deny', rule_id: 'no-reboot' });
    const bad = await server.request('POST', '/policy/check', { command: 'uptime', target: 'not a slug' }, as(AGENT));
    expect(bad.status).toBe(400);
  });

  it('refuses a change made on a stale version: two operators at once, one wins and one gets 409', async () => {
    const next = { rules: [ROUTINE] };
    const other = { rules: [NO_REBOOT] };
    const [a, b] = await Promise.all([put(next, as(OP, { 'if-match': '1' })), put(other, as(OP2, { 'if-match': '1' }))]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const lost = a.status === 409 ? a : b;
    expect(lost.body.code).toBe('policy_version_mismatch');
    const history = (await server.request('GET', '/policy/history', undefined, as(AUDIT))).body.versions;
    expect(history.map((v: { version: number }) => v.version)).toEqual([1, 2]);
    expect(history[1].by.role).toBe('operator');
  });
});
