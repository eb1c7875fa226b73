// `nomos policy apply FILE` and `nomos policy check` against a real server: a YAML policy switched on, the same
// file again unchanged, a file whose example fails refused with the rule and example named (exit 1, nothing
// changed), an agent's token refused, and check's exit status saying the decision (0 allow, 3 ask, 4 deny).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { execNomos } from '../support/cli-process.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const OP = 'operator-token-0123456789abcdef-0123';
const AGENT = 'agent-token-0123456789abcdef-012345';
const POLICY = `rules:
  - id: rclone-restart
    match: [systemctl, [restart, reload], rclone-backup]
    targets: ["lxc:*"]
    decision: allow
    justification: restarting the backup unit is routine
    examples: {match: ["sudo systemctl restart rclone-backup"], not_match: ["systemctl stop rclone-backup"]}
  - id: no-reboot
    match: [reboot]
    decision: deny
    justification: reboots go through the change window
`;

describe('nomos policy', () => {
  let server: TestServer;
  let dir: string;
  const env = (token: string) => ({ NOMOS_URL: server.url, NOMOS_TOKEN: token });

  beforeAll(async () => {
    server = await startTestServer(databases[0]!, { tokens: parseTokens(`operator:alice:${OP},agent:bot:${AGENT}`) });
    dir = await mkdtemp(join(tmpdir(), 'nomos-policy-'));
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('applies a YAML file, then says the same file again changes nothing', async () => {
    const file = join(dir, 'policy.yaml');
    await writeFile(file, POLICY);
    const first = await execNomos(['policy', 'apply', file], env(OP));
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^policy version 1 in force \([0-9a-f]{12}\)/);
    const again = await execNomos(['policy', 'apply', file], env(OP));
    expect(again.stdout).toMatch(/^policy unchanged: version 1/);
  });

  it('refuses a file whose example fails, naming the rule and the example, and an agent, changing nothing', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, POLICY.replace('not_match: ["systemctl stop rclone-backup"]', 'not_match: ["systemctl reload rclone-backup"]'));
    const bad = await execNomos(['policy', 'apply', file], env(OP));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/invalid_policy.*rule rclone-restart: example "systemctl reload rclone-backup": the rule matches this example/);
    const agent = await execNomos(['policy', 'apply', join(dir, 'policy.yaml')], env(AGENT));
    expect(agent.code).toBe(1);
    expect(agent.stderr).toMatch(/403 forbidden/);
    expect((await server.request('GET', '/policy', undefined, { authorization: `Bearer ${OP}` })).body.version).toBe(1);
  });

  it('checks a command on a target: the decision as JSON, and as the exit status', async () => {
    const cases: Array<[string, string, string, number]> = [
      ["sh -c 'systemctl restart rclone-backup'", 'lxc:rclone', 'allow', 0],
      ['systemctl restart rclone-backup', 'host:strong', 'ask', 3],
      ['sudo reboot', 'host:strong', 'deny', 4],
    ];
    for (const [command, target, decision, code] of cases) {
      const run = await execNomos(['policy', 'check', command, '--target', target], env(AGENT));
      expect(run.code, `${command} on ${target}: ${run.stderr}`).toBe(code);
      expect(JSON.parse(run.stdout)).toMatchObject({ decision, policy_version: 1 });
    }
  });
});
