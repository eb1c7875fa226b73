// `nomos policy what-if FILE` against a real server: a YAML candidate and the same as JSON print the server's
// answer (exit 0) over a history made through the API; a candidate that does not load prints the rule and the
// example (exit 1), and an agent's token is refused (exit 1, 403); nothing is appended either way.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { execNomos } from '../support/cli-process.ts';
import { databases } from '../support/databases.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const OP = 'operator-token-0123456789abcdef-0123';
const AGENT = 'agent-token-0123456789abcdef-012345';
const AUDIT = 'auditor-token-0123456789abcdef-0123';
const CANDIDATE = `rules:
  - id: no-cat
    match: [cat]
    decision: deny
    justification: reads go through the inventory
    examples: {match: ["sudo cat /etc/hostname"]}
`;

describe('nomos policy what-if', () => {
  let server: TestServer;
  let dir: string;
  const env = (token: string) => ({ NOMOS_URL: server.url, NOMOS_TOKEN: token });
  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    server = await startTestServer(databases[0]!, { tokens: parseTokens(`operator:alice:${OP},agent:bot:${AGENT},auditor:carol:${AUDIT}`), executor: instantExecutor() });
    dir = await mkdtemp(join(tmpdir(), 'nomos-what-if-'));
    const registered = await server.request('POST', '/entities', {
      entities: [{ slug: 'host:peer', type: 'host', ssh: { host: '127.0.0.1', port: 22, user: 'root' } }, { slug: 'lxc:box', type: 'lxc', parent: 'host:peer', pve_id: 132 }],
    }, as(OP));
    expect(registered.status).toBe(200);
    const session = (await server.request('POST', '/sessions', undefined, as(AGENT))).body.session_id as string;
    for (const command of ['cat /etc/hostname', 'df -h']) {
      const ran = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target: 'lxc:box', command }, as(AGENT));
      expect(ran.body.status, JSON.stringify(ran.body)).toBe('succeeded');
    }
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the answer for a YAML file and the same document as JSON, for an operator and an auditor', async () => {
    const before = (await server.runtime.store.head()).position;
    const yaml = join(dir, 'candidate.yaml');
    const json = join(dir, 'candidate.json');
    await writeFile(yaml, CANDIDATE);
    await writeFile(json, JSON.stringify({ rules: [{ id: 'no-cat', match: ['cat'], decision: 'deny', justification: 'reads go through the inventory' }] }));
    for (const [file, token] of [[yaml, OP], [json, AUDIT]] as const) {
      const run = await execNomos(['policy', 'what-if', file], env(token));
      expect(run.code, run.stderr).toBe(0);
      const answer = JSON.parse(run.stdout);
      expect(answer).toMatchObject({ replayed: 2, changes: { unchanged: 1, newly_allowed: 0, newly_asked: 0, newly_denied: 1 } });
      expect(answer.samples.newly_denied).toEqual([expect.objectContaining({ command: 'cat /etc/hostname', target: 'lxc:box', decision_then: 'allow', decided_by: null, outcome: 'succeeded' })]);
    }
    expect((await server.runtime.store.head()).position).toBe(before);
  });

  it('refuses a file whose example fails, naming the rule and the example, and an agent', async () => {
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, CANDIDATE.replace('sudo cat /etc/hostname', 'ls /etc'));
    const refused = await execNomos(['policy', 'what-if', bad], env(OP));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/invalid_policy.*rule no-cat: example "ls \/etc"/);
    const agent = await execNomos(['policy', 'what-if', join(dir, 'candidate.yaml')], env(AGENT));
    expect(agent.code).toBe(1);
    expect(agent.stderr).toMatch(/403 forbidden/);
  });
});
