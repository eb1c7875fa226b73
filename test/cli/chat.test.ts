// `nomos chat` with its stdin a pipe (a script, not a terminal): a child process reading stdin, streaming the
// turn, approving a command inline, then printing how it ended and the agent's continuation.
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { databases } from '../support/databases.ts';
import { type AgentWorld, startAgentWorld } from '../support/agent-world.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import type { TestServer } from '../support/server.ts';
import { type SshPeer, sshOf } from '../support/ssh-peer.ts';

const database = databases[0]!;
const marker = `/tmp/nomos-chat-cli-${process.pid}`;

describe(`nomos chat on ${database.name}`, () => {
  let peer: SshPeer;
  let llm: FakeOpenAi;
  let server: TestServer;
  let world: AgentWorld;
  beforeAll(async () => {
    world = await startAgentWorld(database, {
      tokens: parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars'),
    });
    ({ peer, llm, server } = world);
    await server.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh: sshOf(peer) }, { authorization: 'Bearer op-secret-1-long-enough-for-32-chars' });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
    rmSync(marker, { force: true });
  });

  it('streams a turn, shows tool calls compactly, and approves inline', async () => {
    llm.script({ toolCalls: [{ name: 'run', arguments: { target: 'host:peer', command: `touch ${marker}` } }] }, { content: 'It needs your approval.' }, { content: 'The marker is there now.' });
    const child = spawn(process.execPath, ['bin/nomos.mjs', 'chat'], { env: { ...process.env, NOMOS_URL: server.url, NOMOS_TOKEN: 'op-secret-1-long-enough-for-32-chars' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const waitFor = async (pattern: RegExp) => {
      for (let i = 0; i < 600 && !pattern.test(output); i++) await new Promise((r) => setTimeout(r, 50));
      expect(output).toMatch(pattern);
    };
    await waitFor(/you> /);
    child.stdin.write('please touch the marker\n');
    await waitFor(/approve ".*touch/);
    expect(output).toMatch(/→ run \{"target":"host:peer"/);
    expect(output).toMatch(/nomos> It needs your approval\./);
    child.stdin.write('y\n');
    await waitFor(/approved: touch .* on host:peer\n {2}✓ succeeded · exit 0\n/);
    await waitFor(/nomos> The marker is there now\.\n {2}\(turn completed/);
    child.stdin.end();
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0);
    expect(existsSync(marker)).toBe(true);
  }, 60_000);
});
