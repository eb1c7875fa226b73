// `nomos policy suggest [--min-approvals N]` against a real server whose approvals were made through the real
// command path: the suggestions as the server's JSON, the threshold passed on, an agent's token refused (exit 1,
// 403), and a threshold that is no whole number refused before anything is asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { execNomos } from '../support/cli-process.ts';
import { databases } from '../support/databases.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const OP = 'operator-token-0123456789abcdef-0123';
const AGENT = 'agent-token-0123456789abcdef-012345';
const AUDIT = 'auditor-token-0123456789abcdef-0123';
const as = (token: string) => ({ authorization: `Bearer ${token}` });

describe('nomos policy suggest', () => {
  let server: TestServer;
  const env = (token: string) => ({ NOMOS_URL: server.url, NOMOS_TOKEN: token });

  /** Runs the command in a session of its own, as the agent, and the operator approves it. */
  async function approved(command: string): Promise<void> {
    const session = (await server.request('POST', '/sessions', undefined, as(AGENT))).body.session_id as string;
    const run = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target: 'lxc:box', command }, as(AGENT));
    expect(run.body, JSON.stringify(run.body)).toMatchObject({ status: 'approval_required' });
    expect((await server.request('POST', `/approvals/${run.body.approval_id as string}/approve`, undefined, as(OP))).status).toBe(200);
    await server.runtime.executions.settled();
  }

  beforeAll(async () => {
    server = await startTestServer(databases[0]!, { tokens: parseTokens(`operator:alice:${OP},agent:bot:${AGENT},auditor:carol:${AUDIT}`), executor: instantExecutor() });
    const reg = await server.request('POST', '/entities', {
      entities: [
        { slug: 'host:peer', type: 'host', ssh: { host: '127.0.0.1', port: 22, user: 'root' } },
        { slug: 'lxc:box', type: 'lxc', parent: 'host:peer', pve_id: 132 },
      ],
    }, as(OP));
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    for (let i = 0; i < 3; i++) await approved('systemctl restart rclone-backup');
    for (let i = 0; i < 2; i++) await approved('chown :0 /srv/data');
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('prints the suggestions as JSON, with the threshold passed on', async () => {
    const run = await execNomos(['policy', 'suggest'], env(AUDIT));
    expect(run.code, run.stderr).toBe(0);
    const { suggestions } = JSON.parse(run.stdout);
    expect(suggestions.map((s: { rule: { id: string } }) => s.rule.id)).toEqual(['suggested-systemctl-restart-rclone-backup']);
    expect(suggestions[0]).toMatchObject({
      rule: { match: ['systemctl', 'restart', 'rclone-backup'], targets: ['lxc:box'], decision: 'allow' },
      evidence: { approvals: 3, denials: 0, sessions: 3, expired: 0 },
      what_if: { changes: { newly_allowed: 3 } },
    });
    const two = await execNomos(['policy', 'suggest', '--min-approvals', '2'], env(OP));
    expect(two.code, two.stderr).toBe(0);
    expect(JSON.parse(two.stdout).suggestions.map((s: { rule: { id: string } }) => s.rule.id)).toEqual(['suggested-systemctl-restart-rclone-backup', 'suggested-chown-0-srv-data']);
  }, 60_000);

  it("refuses an agent's token, and a threshold that is no whole number from 1", async () => {
    const agent = await execNomos(['policy', 'suggest'], env(AGENT));
    expect(agent.code).toBe(1);
    expect(agent.stderr).toMatch(/403 forbidden/);
    for (const bad of ['0', 'three', '2.5']) {
      const run = await execNomos(['policy', 'suggest', '--min-approvals', bad], env(OP));
      expect(run.code, bad).toBe(1);
      expect(run.stderr, bad).toMatch(/--min-approvals takes a whole number from 1/);
    }
  }, 60_000);
});
