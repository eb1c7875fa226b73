// The chat page in a real browser: the scripted OpenAI-compatible server streams a reply into the page, a tool
// call and an approval show inline and can be approved (the agent's continuation follows); a connection cut by a
// proxy mid-reply resumes with every text once; failed and empty answers are error cards; 409, cancel, continue.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, type Socket, connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { type AgentWorld, startAgentWorld } from '../support/agent-world.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import type { TestServer } from '../support/server.ts';
import { type SshPeer, sshOf } from '../support/ssh-peer.ts';
import { until } from '../support/until.ts';

const embedded = databases.find((d) => d.name === 'pglite')!;
const call = (name: string, args: unknown) => ({ toolCalls: [{ name, arguments: args }] });

/** A TCP proxy in front of the server whose connections can be cut, and new ones refused for a while. */
async function startProxy(target: string): Promise<{ url: string; cut(refuseMs: number): void; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let refuseUntil = 0;
  const server: Server = createServer((client) => {
    if (Date.now() < refuseUntil) return void client.destroy();
    const upstream = connect(Number(port), hostname);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', end);
      s.on('close', end);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut(refuseMs) {
      refuseUntil = Date.now() + refuseMs;
      for (const s of sockets) s.destroy();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((ok) => server.close(ok));
    },
  };
}

describe('the chat page', () => {
  let peer: SshPeer;
  let llm: FakeOpenAi;
  let server: TestServer;
  let world: AgentWorld;
  let browser: TestBrowser;
  const scratch = `/tmp/nomos-web-chat-${randomUUID()}`;

  beforeAll(async () => {
    mkdirSync(scratch, { recursive: true });
    world = await startAgentWorld(embedded, {
      execution: { shortWaitMs: 5_000, hardLimitMs: 60_000, approvalTtlMs: 15 * 60_000, hungAfterMs: 60_000 },
    });
    ({ peer, llm, server } = world);
    const reg = await server.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh: sshOf(peer) });
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await world?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const events = async (session: string) => (await server.request('GET', `/sessions/${session}/events`)).body.events as Array<{ type: string; data: any }>;
  const sessionOf = (url: string) => /#\/chat\/([0-9a-f-]{36})$/.exec(url)?.[1];

  it('streams the reply into the page, shows the tool call and the approval it asked for; approving runs it once and the agent carries on', async () => {
    writeFileSync(`${scratch}/chat`, 'x');
    const command = `rm -rf ${scratch}/chat && echo chat-removed`;
    const asked = 'I asked an operator to approve removing the scratch file; it runs once it is approved.';
    const after = 'Done: the scratch file is removed (chat-removed).';
    llm.script({ ...call('run', { target: 'host:peer', command }), delayMs: 50 }, { content: asked, chunks: 8, delayMs: 200 }, { content: after, chunks: 3, delayMs: 50 });
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/chat`);
    const box = page.getByLabel('Message to the agent');
    await box.fill('remove the scratch file on host:peer');
    await box.press('Enter');
    await page.getByTestId('user-message').filter({ hasText: 'remove the scratch file on host:peer' }).waitFor();

    // While the turn runs its tool calls are open: the run, waiting for an operator.
    await page.getByTestId('tool-call').filter({ hasText: 'approval required' }).waitFor();
    expect(await page.getByTestId('tool-call').textContent()).toContain(command);
    // Token deltas land in the bubble as they come: several partial texts before the stored one.
    const draft = page.getByTestId('assistant-draft');
    const partials = new Set<string>();
    await until('the stored text', async () => {
      const text = (await draft.textContent({ timeout: 100 }).catch(() => null))?.replace('▍', '');
      if (text) partials.add(text);
      return (await page.getByTestId('assistant-text').count()) > 0 ? true : undefined;
    }, 15_000, 50);
    expect(partials.size).toBeGreaterThanOrEqual(2);
    // Each draft is a prefix of the reply; the last may be all of it, shown until the stored message replaces it.
    for (const p of partials) expect(asked.startsWith(p)).toBe(true);
    expect([...partials].filter((p) => p !== asked).length).toBeGreaterThanOrEqual(1);
    await page.getByTestId('assistant-text').filter({ hasText: asked }).waitFor();
    const session = sessionOf(page.url());
    expect(session).toBeDefined();

    const approval = page.getByRole('group', { name: `approval for ${command}` });
    await approval.getByRole('button', { name: 'Approve' }).click();
    await approval.getByTestId('execution-status').filter({ hasText: 'succeeded' }).first().waitFor({ timeout: 15_000 });
    await approval.getByLabel('output').filter({ hasText: 'chat-removed' }).first().waitFor();
    expect(existsSync(`${scratch}/chat`)).toBe(false);
    // The continuation the agent starts by itself arrives on the session stream.
    await page.getByTestId('assistant-text').filter({ hasText: after }).waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('assistant-text').allTextContents()).toEqual([asked, after]);
    await page.getByRole('button', { name: 'Continue' }).waitFor();
    await screenshot('chat');
    expect((await events(session!)).filter((e) => e.type === 'ExecutionStarted')).toHaveLength(1);

    // The same session from its address: the history, each entry once, then followed live.
    await page.reload();
    await page.getByTestId('assistant-text').nth(1).waitFor();
    expect(await page.getByTestId('assistant-text').allTextContents()).toEqual([asked, after]);
    expect(await page.getByTestId('user-message').allTextContents()).toEqual(['remove the scratch file on host:peer']);
    expect(await approval.getByTestId('approval-status').textContent()).toBe('granted');
    await approval.getByLabel('output').filter({ hasText: 'chat-removed' }).waitFor();
    await page.getByRole('button', { name: '1 tool call' }).click();
    expect(await page.getByTestId('tool-call').count()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('resumes a reply cut off mid-stream: shows reconnecting, then every text exactly once and complete', async () => {
    const proxy = await startProxy(server.url);
    try {
      const text = 'The fleet looks healthy: every host answered, no execution is failing and nothing waits for approval right now.';
      llm.script({ ...call('whoami', {}), delayMs: 50 }, { content: text, chunks: 16, delayMs: 200 });
      const { page, errors } = await browser.open(`${proxy.url}/#/chat`);
      const box = page.getByLabel('Message to the agent');
      await box.fill('how is the fleet?');
      await box.press('Enter');
      // Cut while the reply streams, and refuse new connections for a while so the page must retry.
      await until('a partial reply', async () => ((await page.getByTestId('assistant-draft').textContent({ timeout: 100 }).catch(() => ''))!.length > 5 ? true : undefined), 10_000, 20);
      expect(await page.getByTestId('assistant-text').count()).toBe(0);
      proxy.cut(1_200);
      await page.getByRole('status', { name: 'reconnecting' }).waitFor({ timeout: 5_000 });
      await page.getByTestId('assistant-text').waitFor({ timeout: 15_000 });
      expect(await page.getByTestId('assistant-text').allTextContents()).toEqual([text]);
      const transcript = (await page.getByRole('region', { name: 'transcript' }).innerText()).split(text).length - 1;
      expect(transcript).toBe(1);
      await page.getByRole('button', { name: '1 tool call' }).click();
      expect(await page.getByTestId('tool-call').allTextContents()).toHaveLength(1);
      expect(await page.getByRole('status', { name: 'reconnecting' }).count()).toBe(0);
      const session = sessionOf(page.url())!;
      expect((await events(session)).filter((e) => e.type === 'TurnEnded')).toHaveLength(1);
      // Requests in flight when the proxy cut them, and those it refused, fail as network errors: provoked here.
      expect(errors.filter((e) => !/net::ERR_(CONNECTION_RESET|CONNECTION_REFUSED|CONNECTION_CLOSED|SOCKET_NOT_CONNECTED|EMPTY_RESPONSE|INCOMPLETE_CHUNKED_ENCODING)/.test(e))).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('shows a failed or empty answer as an error card, never a blank bubble', async () => {
    llm.script({ status: 500, error: 'down' }, { status: 500, error: 'still down' });
    const { page, errors } = await browser.open(`${server.url}/#/chat`);
    const box = page.getByLabel('Message to the agent');
    await box.fill('are you there?');
    await box.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'The model provider failed' }).waitFor({ timeout: 15_000 });

    llm.script({ content: '' }, { content: '   ' }, { content: '' }, { content: '' });
    await box.fill('hello?');
    await box.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'The model gave an empty answer' }).waitFor({ timeout: 15_000 });
    await page.locator('article.turn[data-status="failed"]').nth(1).waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('assistant-text').count()).toBe(0);
    expect(await page.getByTestId('assistant-draft').count()).toBe(0);
    expect(await page.getByTestId('user-message').allTextContents()).toEqual(['are you there?', 'hello?']);
    expect(errors).toEqual([]);
  });

  it('says a turn is running (409) with the server’s detail, cancels it, and continues the session by hand', async () => {
    const session = (await server.request('POST', '/sessions')).body.session_id as string;
    llm.script({ hangMs: 30_000 });
    expect((await server.request('POST', `/sessions/${session}/continue`)).status).toBe(202);
    const { page, errors } = await browser.open(`${server.url}/#/chat/${session}`);
    await page.getByRole('button', { name: 'Cancel turn' }).waitFor();
    const box = page.getByLabel('Message to the agent');
    await box.fill('are you busy?');
    await box.press('Enter');
    await page.getByRole('alert').filter({ hasText: '(turn_running)' }).waitFor();
    expect(await box.inputValue()).toBe('are you busy?');

    await page.getByRole('button', { name: 'Cancel turn' }).click();
    await page.getByRole('status').filter({ hasText: 'Turn cancelled' }).waitFor({ timeout: 10_000 });
    llm.script({ content: 'Carrying on now.', chunks: 2, delayMs: 50 });
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('assistant-text').filter({ hasText: 'Carrying on now.' }).waitFor({ timeout: 10_000 });
    expect((await events(session)).filter((e) => e.type === 'TurnStarted')).toHaveLength(2);
    // The 409 answer to POST /chat is the one failed load, provoked on purpose.
    expect(errors.filter((e) => !e.includes('status of 409'))).toEqual([]);
  });

  it('shows, as it happens, a message another client sent to the session the page follows, and the answer to it', async () => {
    const session = (await server.request('POST', '/sessions')).body.session_id as string;
    const { page, errors } = await browser.open(`${server.url}/#/chat/${session}`);
    await page.getByLabel('Message to the agent').waitFor();
    await page.getByText('following').waitFor();
    llm.script({ content: 'Answered for the terminal.', chunks: 2, delayMs: 50 });
    // Another client (the terminal chat, a script) asks; this page posted nothing.
    const res = await fetch(`${server.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session_id: session, message: 'asked from the terminal' }) });
    expect(res.status).toBe(200);
    await res.text();
    await page.getByTestId('user-message').filter({ hasText: 'asked from the terminal' }).waitFor();
    await page.getByTestId('assistant-text').filter({ hasText: 'Answered for the terminal.' }).waitFor();
    expect(await page.getByTestId('user-message').count()).toBe(1);
    expect(errors).toEqual([]);
  });
});
