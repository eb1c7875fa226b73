// The agent's state as an operator needs it: whether it is on, which model at which provider (the base URL's
// host, never the key), its context window and budget, what the system prompt and tool definitions cost of every
// prompt (what is left for the session), whether commands can reach hosts, and the last provider error.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { lastProviderError } from '../projections/model-calls.ts';
import { CALLER } from './responses.ts';
import { Time } from './views.ts';

const Tokens = z.number().int().nonnegative();

const AGENT_SCHEMA = {
  summary: "The agent's model, context budget and state",
  tags: ['agent'],
  response: {
    200: z.object({
      enabled: z.boolean().describe('false: no OPENAI_BASE_URL or OPENAI_API_KEY; POST /chat answers 503'),
      model: z.string().nullable(),
      provider_host: z.string().nullable().describe("the host of the provider's base URL"),
      context: z
        .object({
          window_tokens: Tokens,
          window_source: z.enum(['configured', 'known', 'default']).describe('NOMOS_CONTEXT_TOKENS, the known window of the model, or the default 32 000'),
          reserve_tokens: Tokens.describe("kept for the model's answer"),
          budget_tokens: Tokens.describe('what a prompt may cost'),
          system_prompt_tokens: Tokens.describe('the system prompt with the fleet snapshot, as of now'),
          tools_tokens: Tokens.describe('the tool definitions, sent with every call'),
          session_tokens: z.number().int().describe("what is left of the budget for the session's messages"),
        })
        .nullable(),
      ssh_key_configured: z.boolean().describe('commands can reach hosts (NOMOS_SSH_KEY)'),
      last_provider_error: z
        .object({ at: Time, session_id: z.string(), model: z.string(), provider_host: z.string(), status: z.number().int().nullable(), code: z.string().nullable(), message: z.string() })
        .nullable(),
    }),
    ...CALLER,
  },
};

export const agentApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime } = app.nomos;

  app.get('/agent', { schema: AGENT_SCHEMA }, async () => {
    const described = runtime.agent === null ? null : await runtime.agent.describe();
    return {
      enabled: described !== null,
      model: described?.model ?? null,
      provider_host: described?.providerHost ?? null,
      context:
        described === null
          ? null
          : {
              window_tokens: described.window.windowTokens,
              window_source: described.window.source,
              reserve_tokens: described.window.reserveTokens,
              budget_tokens: described.window.budgetTokens,
              system_prompt_tokens: described.systemPromptTokens,
              tools_tokens: described.toolsTokens,
              session_tokens: described.window.budgetTokens - described.systemPromptTokens - described.toolsTokens,
            },
      ssh_key_configured: runtime.executorConfigured,
      last_provider_error: await lastProviderError(runtime.db),
    };
  });

  done();
};
