// An operator can see the model's state: `nomos serve` says at start whether the agent is on, its model, the
// provider's host, its context window and budget and whether an SSH key is configured; a provider's failure is
// logged at warn level naming the host and the provider's words, never the key; GET /agent says the same, with
// what the system prompt and the tools take of the budget and the last provider error. A real server process on
// the embedded default against the tests' OpenAI-compatible server.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { type ServeProcess, startServeProcess } from '../support/serve-process.ts';
import { readSse } from '../support/sse-reader.ts';
import { until } from '../support/until.ts';

const KEY = 'sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0';

describe('the agent state an operator sees', () => {
  let root: string;
  let llm: FakeOpenAi;
  const servers: ServeProcess[] = [];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'nomos-agent-state-'));
    llm = await startFakeOpenAi();
  });
  afterAll(async () => {
    for (const server of servers) await server.stop();
    await llm?.close();
    await rm(root, { recursive: true, force: true });
  });

  /** The JSON lines of the server's log. */
  const lines = (server: ServeProcess) =>
    server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string; [field: string]: unknown });

  it('logs the agent on with its model, provider host, window and budget, and a provider failure at warn level, never the key', async () => {
    const server = await startServeProcess({ NOMOS_DATA_DIR: join(root, 'on'), OPENAI_BASE_URL: llm.baseURL, OPENAI_API_KEY: KEY, NOMOS_MODEL: 'llama3.1:8b', NOMOS_CONTEXT_TOKENS: '8192' });
    servers.push(server);
    const host = new URL(llm.baseURL).host;
    const started = await until('the log line about the agent', () => Promise.resolve(lines(server).find((l) => l.msg.startsWith('agent: '))), 10_000);
    expect(started.level).toBe(30);
    expect(started.msg).toMatch(new RegExp(`^agent: on — model llama3\\.1:8b at ${host.replace('.', '\\.')}; context window 8192 tokens \\(NOMOS_CONTEXT_TOKENS\\), prompt budget 7168 \\(system prompt \\d+, tools \\d+\\); SSH key: none`));

    const agent = await server.request('GET', '/agent');
    expect(agent.status).toBe(200);
    expect(agent.body).toMatchObject({ enabled: true, model: 'llama3.1:8b', provider_host: host, ssh_key_configured: false, last_provider_error: null });
    expect(agent.body.context).toMatchObject({ window_tokens: 8192, window_source: 'configured', reserve_tokens: 1024, budget_tokens: 7168 });
    const { system_prompt_tokens: prompt, tools_tokens: tools, session_tokens: left } = agent.body.context;
    expect(prompt).toBeGreaterThan(100);
    expect(tools).toBeGreaterThan(500);
    expect(left).toBe(7168 - prompt - tools);

    llm.script({ status: 503, error: 'the model is loading', retryAfter: '0' }, { content: 'Here now.' });
    const res = await fetch(`${server.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'hello?' }) });
    expect((await readSse(res, (m) => m.type === 'done')).at(-1)!.data.status).toBe('completed');
    const warned = await until('the warning of the failure', () => Promise.resolve(lines(server).find((l) => l.level === 40 && l.msg.includes('the model is loading'))), 10_000);
    expect(warned.msg).toContain(`model provider ${host} failed; trying again`);
    expect(warned).toMatchObject({ status: 503, provider: host, model: 'llama3.1:8b' });
    expect((await server.request('GET', '/agent')).body.last_provider_error).toMatchObject({ status: 503, provider_host: host, model: 'llama3.1:8b' });
    expect(server.output()).not.toContain(KEY);
  }, 60_000);

  it('logs the agent off, and says why, when no provider is configured', async () => {
    const server = await startServeProcess({ NOMOS_DATA_DIR: join(root, 'off') });
    servers.push(server);
    const said = await until('the log line about the agent', () => Promise.resolve(lines(server).find((l) => l.msg.startsWith('agent: '))), 10_000);
    expect(said).toMatchObject({ level: 40, msg: expect.stringMatching(/^agent: off \(set OPENAI_BASE_URL or OPENAI_API_KEY/) });
    expect((await server.request('GET', '/agent')).body).toEqual({ enabled: false, model: null, provider_host: null, context: null, ssh_key_configured: false, last_provider_error: null });
  }, 60_000);
});
