// `nomos chat` in a real pseudo-terminal (util-linux `script`), against a real server, the scripted model and a
// real sshd: approving shows how the command ended and then the agent's continuation as it streams; a pending
// run is followed to its end; refused and failed runs are drawn as such; a denial is said and the wait for a
// continuation is bounded (and Ctrl-C ends it); --session prints the session's last messages before the prompt.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { freePort } from '../support/cli-process.ts';
import { databases } from '../support/databases.ts';
import { type AgentWorld, startAgentWorld } from '../support/agent-world.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import type { TestServer } from '../support/server.ts';
import { type SshPeer, sshOf } from '../support/ssh-peer.ts';
import { readSse } from '../support/sse-reader.ts';
import { type Terminal, closeTerminals, openTerminal } from '../support/terminal.ts';

const database = databases[0]!;
const OPERATOR = { authorization: 'Bearer op-secret-1-long-enough-for-32-chars' };
const marker = `/tmp/nomos-chat-pty-${process.pid}`;
const call = (...calls: Array<{ name: string; arguments: unknown }>) => ({ toolCalls: calls });
const run = (target: string, command: string) => ({ name: 'run', arguments: { target, command } });

describe(`nomos chat in a terminal on ${database.name}`, () => {
  let peer: SshPeer;
  let llm: FakeOpenAi;
  let server: TestServer;
  let world: AgentWorld;
  let env: Record<string, string>;
  beforeAll(async () => {
    world = await startAgentWorld(database, {
      tokens: parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars'),
      execution: { shortWaitMs: 3_000, hardLimitMs: 60_000, approvalTtlMs: 120_000, hungAfterMs: 60_000 },
    });
    ({ peer, llm, server } = world);
    const ssh = sshOf(peer);
    expect((await server.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh }, OPERATOR)).status).toBe(200);
    // Nothing listens there: a run on it is refused as unreachable.
    const gone = { host: '127.0.0.1', port: await freePort(), user: userInfo().username };
    expect((await server.request('POST', '/entities', { slug: 'host:gone', type: 'host', ssh: gone }, OPERATOR)).status).toBe(200);
    env = { NOMOS_URL: server.url, NOMOS_TOKEN: 'op-secret-1-long-enough-for-32-chars' };
  }, 60_000);
  afterEach(closeTerminals);
  afterAll(async () => {
    await world?.close();
    rmSync(marker, { force: true });
  });

  const quit = async (t: Terminal) => {
    t.type('/quit\r');
    expect(await t.exited).toBe(0);
  };

  it("after y, shows the execution's status, exit code and output, then the agent's continuation as it streams", async () => {
    const continuation = ['Container 105 ', 'is destroyed: ', 'the host said ', 'so.'];
    llm.script(call(run('host:peer', 'pct destroy 105')), { content: 'Destroying 105 needs your approval.' }, { content: continuation.join(''), chunks: 4, delayMs: 700 });
    const t = openTerminal(['chat'], env);
    await t.waitFor(/you> /);
    t.type('destroy container 105\r');
    await t.waitFor(/approve "pct destroy 105" on host:peer\? \(expires in \d+m \d\ds\) \[y\/n, or a reason to deny\]/);
    expect(t.screen()).toMatch(/→ run \{"target":"host:peer","command":"pct destroy 105"\}/);
    expect(t.screen()).toMatch(/⏸ approval needed: pct destroy 105 on host:peer \(destructive\)/);
    expect(t.screen()).toMatch(/⏸ waiting for an operator's approval \(destructive\)/);
    expect(t.screen()).toMatch(/nomos> Destroying 105 needs your approval\./);

    const answeredAt = t.screen().length;
    t.type('y\r');
    const succeededAt = await t.waitFor(/✓ succeeded · exit 0\n {4}out│ destroyed container 105\n/, answeredAt);
    expect(t.screen().slice(answeredAt, succeededAt)).toMatch(/approved: pct destroy 105 on host:peer/);
    // Streamed: the first pieces of the answer are on the screen while its end is still on its way.
    await t.waitFor(/nomos> Container 105 /, succeededAt);
    expect(t.screen().slice(succeededAt)).not.toContain('the host said so.');
    const doneAt = await t.waitFor(/Container 105 is destroyed: the host said so\.\n {2}\(turn completed; session [0-9a-f-]{36}\)\n/, succeededAt);
    await t.waitFor(/you> /, doneAt);
    // The continuation came from the model's third call, which was told how the execution ended.
    expect(llm.requests).toHaveLength(3);
    expect(JSON.stringify(llm.requests[2]!.messages)).toContain('destroyed container 105');
    await quit(t);
  }, 60_000);

  it('follows an approved command the server still answers pending until it ends', async () => {
    const command = `sleep 4 && touch ${marker} && echo touched`;
    llm.script(call(run('host:peer', command)), { content: 'That needs your approval.' }, { content: 'The marker is in place.' });
    const t = openTerminal(['chat'], env);
    await t.waitFor(/you> /);
    t.type('touch the marker slowly\r');
    await t.waitFor(/approve ".*touch/);
    const answeredAt = t.screen().length;
    t.type('y\r');
    const pendingAt = await t.waitFor(/… pending: still running \(execution [0-9a-f-]{36}\)/, answeredAt);
    const endedAt = await t.waitFor(/✓ succeeded · exit 0\n {4}out│ touched\n/, pendingAt);
    expect(existsSync(marker)).toBe(true);
    await t.waitFor(/nomos> The marker is in place\.\n {2}\(turn completed/, endedAt);
    await quit(t);
  }, 60_000);

  it('draws a refused run and a failed run as such, with the reason or the exit code, never ✓', async () => {
    const missing = `/nonexistent-nomos-${process.pid}`;
    llm.script(call(run('host:gone', 'uptime'), run('host:peer', `cat ${missing}`)), { content: 'Neither worked.' });
    const t = openTerminal(['chat'], env);
    await t.waitFor(/you> /);
    t.type('uptime on gone, and read the missing file\r');
    await t.waitFor(/\(turn completed/);
    const screen = t.screen();
    const refused = /→ run \{"target":"host:gone","command":"uptime"\}\n {2}(.*)\n/.exec(screen)?.[1];
    expect(refused).toMatch(/^✗ refused \(unreachable\): .+/);
    const failed = new RegExp(`→ run \\{"target":"host:peer","command":"cat ${missing}"\\}\\n {2}(.*)\\n {4}(.*)\\n`).exec(screen);
    expect(failed?.[1]).toBe('✗ failed · exit 1');
    expect(failed?.[2]).toMatch(new RegExp(`^err│ cat: ${missing}: No such file or directory`));
    expect(screen).not.toMatch(/✓/);
    await quit(t);
  }, 60_000);

  it('after a denial says denied, and comes back to the prompt within the bounded wait when no continuation comes', async () => {
    llm.script(call(run('host:peer', 'pct stop 105')), { content: 'Stopping 105 needs your approval.' }, { content: 'Understood: 105 keeps running.' });
    const t = openTerminal(['chat', '--continuation-wait', '2'], env);
    await t.waitFor(/you> /);
    t.type('stop container 105\r');
    await t.waitFor(/approve "pct stop 105" on host:peer\?/);
    const answeredAt = t.screen().length;
    const decidedAt = Date.now();
    t.type('not during business hours\r');
    await t.waitFor(/denied: not during business hours\n {2}\(waiting up to 2 s for the agent to carry on; Ctrl-C stops waiting\)/, answeredAt);
    const promptAt = await t.waitFor(/\nyou> /, answeredAt, 15_000);
    const waited = Date.now() - decidedAt;
    const after = t.screen().slice(answeredAt, promptAt);

    const sessionId = /session ([0-9a-f-]{36})/.exec(t.screen())![1]!;
    const approvals = await server.request('GET', '/approvals?status=denied', undefined, OPERATOR);
    expect(approvals.body.approvals.find((a: any) => a.session_id === sessionId)).toMatchObject({ command: 'pct stop 105', decision_reason: 'not during business hours' });
    // Whether the agent carried on after a denial is the server's to decide: the screen tells what happened.
    const { body } = await server.request('GET', `/sessions/${sessionId}/events`, undefined, OPERATOR);
    const denied = body.events.find((e: any) => e.type === 'ApprovalDenied').position;
    if (body.events.some((e: any) => e.type === 'TurnStarted' && e.position > denied)) {
      expect(after).toMatch(/nomos> Understood: 105 keeps running\.\n {2}\(turn completed/);
    } else {
      expect(after).toMatch(/\(the agent did not carry on within 2 s: it goes on when you write, or when a command it waits on ends\)/);
      expect(waited).toBeLessThan(10_000);
    }
    await quit(t);
  }, 60_000);

  it('Ctrl-C stops the wait for a continuation, not the chat; at the prompt it ends the chat', async () => {
    llm.script(call(run('host:peer', 'pct stop 106')), { content: 'Stopping 106 needs your approval.' }, { content: 'Understood: 106 keeps running.', delayMs: 500 });
    const t = openTerminal(['chat', '--continuation-wait', '120'], env);
    await t.waitFor(/you> /);
    t.type('stop container 106\r');
    await t.waitFor(/approve "pct stop 106" on host:peer\?/);
    const answeredAt = t.screen().length;
    t.type('n\r');
    await t.waitFor(/denied: denied in the terminal\n {2}\(waiting up to 120 s/, answeredAt);
    t.type('\x03');
    const stoppedAt = await t.waitFor(/\(stopped following; nomos chat --session [0-9a-f-]{36} shows what the agent did\)\nyou> /, answeredAt, 10_000);
    t.type('\x03');
    expect(await t.exited).toBe(0);
    expect(t.screen().slice(stoppedAt)).not.toMatch(/nomos: /);
    // The agent carries on after the denial on the server, watched or not: let that turn end before the next test scripts the model.
    const sessionId = /session ([0-9a-f-]{36})/.exec(t.screen())![1]!;
    for (let i = 0; i < 100; i++) {
      const { body } = await server.request('GET', `/sessions/${sessionId}/events`, undefined, OPERATOR);
      const denied = body.events.find((e: any) => e.type === 'ApprovalDenied')?.position ?? Infinity;
      if (body.events.some((e: any) => e.type === 'TurnEnded' && e.position > denied)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);

  it("--session ID prints the session's last messages, a line per tool call, before the prompt, and continues it", async () => {
    const hostname = readFileSync('/etc/hostname', 'utf8').trim();
    const chat = async (message: string, sessionId?: string) => {
      const res = await fetch(`${server.url}/chat`, { method: 'POST', headers: { ...OPERATOR, 'content-type': 'application/json' }, body: JSON.stringify({ message, ...(sessionId && { session_id: sessionId }) }) });
      expect(res.status).toBe(200);
      return readSse(res, (m) => m.type === 'done');
    };
    llm.script({ content: 'pong 1' }, { content: 'pong 2' }, { content: 'pong 3' }, { content: 'pong 4' }, call(run('host:peer', 'cat /etc/hostname')), { content: `The hostname is ${hostname}.` }, { content: 'You are welcome.' });
    const sessionId = (await chat('ping 1'))[0]!.session_id;
    for (const n of [2, 3, 4]) await chat(`ping ${n}`, sessionId);
    const last = (await chat('what is the hostname?', sessionId)).at(-1)!;
    // The history comes from the read models: let them reach the last turn before the terminal asks.
    expect((await fetch(`${server.url}/sessions/${sessionId}?min_position=${last.id}`, { headers: OPERATOR })).status).toBe(200);

    const t = openTerminal(['chat', '--session', sessionId], env);
    const promptAt = await t.waitFor(/you> $/);
    const history = t.screen().slice(0, promptAt);
    // 4 × (you, nomos) + you, one tool call, nomos: 11 entries, the last 10 shown.
    expect(history.trimEnd().split('\n')).toEqual([
      `session ${sessionId} · active`,
      `  … 1 earlier (GET /sessions/${sessionId} has them all)`,
      'nomos> pong 1',
      'you> ping 2',
      'nomos> pong 2',
      'you> ping 3',
      'nomos> pong 3',
      'you> ping 4',
      'nomos> pong 4',
      'you> what is the hostname?',
      '  → run {"target":"host:peer","command":"cat /etc/hostname"}  ✓ succeeded · exit 0',
      `nomos> The hostname is ${hostname}.`,
    ]);
    t.type('thanks\r');
    await t.waitFor(/nomos> You are welcome\.\n {2}\(turn completed; session ([0-9a-f-]{36})\)/, promptAt);
    expect(t.screen()).toContain(`(turn completed; session ${sessionId})`);
    await quit(t);
  }, 60_000);
});
