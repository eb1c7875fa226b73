// The set-up of every end-to-end test of the agent: a scripted model behind a real OpenAI-compatible HTTP server
// (fake-openai.ts), a real OpenSSH peer (ssh-peer.ts), and a test server whose agent talks to the one and runs
// commands on the other.
import { SshExecutor } from '../../src/adapters/ssh/executor.ts';
import type { TestDatabase } from './databases.ts';
import { type FakeOpenAi, type FakeOpenAiOptions, startFakeOpenAi } from './fake-openai.ts';
import { type TestServer, startTestServer } from './server.ts';
import { type SshPeer, startSshPeer } from './ssh-peer.ts';

export interface AgentWorld {
  readonly peer: SshPeer;
  readonly llm: FakeOpenAi;
  readonly server: TestServer;
  close(): Promise<void>;
}

/** Starts the three; `options` are the test server's, but for its executor and model, which are these; `llmOptions` the scripted model's. */
export async function startAgentWorld(
  database: TestDatabase,
  options: Omit<NonNullable<Parameters<typeof startTestServer>[1]>, 'executor' | 'llm'> = {},
  llmOptions: FakeOpenAiOptions = {},
): Promise<AgentWorld> {
  const peer = await startSshPeer();
  const llm = await startFakeOpenAi(llmOptions).catch(async (error: unknown) => {
    await peer.close();
    throw error;
  });
  const server = await startTestServer(database, {
    ...options,
    executor: new SshExecutor({ privateKey: peer.privateKey }),
    llm: { baseURL: llm.baseURL, apiKey: 'test-key', model: 'scripted' },
  }).catch(async (error: unknown) => {
    await llm.close();
    await peer.close();
    throw error;
  });
  return {
    peer,
    llm,
    server,
    async close() {
      await server.close();
      await llm.close();
      await peer.close();
    },
  };
}
