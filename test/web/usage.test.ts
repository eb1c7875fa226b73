// The model's usage in the console, in a real browser over a real server whose sessions' model calls are recorded
// through the command layer as the agent records them: a session's tokens, cost and calls one by one (a failed
// call's error in red), followed live; the sessions list's tokens and its min_tokens filter; the Audit page's
// usage panel and per-session tokens and cost; a turn cut at the output limit in the chat; the agent on System.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startSession } from '../../src/commands/session.ts';
import type { ModelCall } from '../../src/domain/session/events.ts';
import { databases } from '../support/databases.ts';
import { recordTurn } from '../support/model-calls.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { command, shownIds, waitForRows } from './sessions-fixtures.ts';

const embedded = databases.find((d) => d.name === 'pglite')!;
const DAY_MS = 86_400_000;
const PRICES = { 'gpt-4o-mini': { input: 0.15, output: 0.6, cached_input: 0.075 }, 'qwen2.5:7b': { input: 0.1, output: 0.2 } };

/** Tokens of the session view as the list sums them: input + output, null when neither was reported. */
const sum = (s: { input_tokens: number | null; output_tokens: number | null }) => (s.input_tokens === null && s.output_tokens === null ? null : (s.input_tokens ?? 0) + (s.output_tokens ?? 0));

describe('model usage in the console', () => {
  let server: TestServer;
  let browser: TestBrowser;
  const ids = { spender: '', frugal: '', silent: '', manual: '', returning: '' };
  const calls: ModelCall[] = [];

  /**
   * A turn of the session with these calls (failed with `failure` when given), recorded as the agent does, `daysAgo`
   * days ago (the API has no way to write the past: the command layer takes a clock set back).
   */
  async function turn(session: string, over: Array<Partial<ModelCall>>, failure?: { reason: 'output_limit'; detail: string }, daysAgo = 0): Promise<ModelCall[]> {
    const deps = { ...server.runtime.commandDeps, clock: () => new Date(Date.now() - daysAgo * DAY_MS) };
    const { calls: recorded, position } = await recordTurn(deps, session, over, failure);
    // Every read model the pages read has taken the turn.
    expect((await server.request('GET', `/usage?min_position=${position}`)).status).toBe(200);
    expect((await server.request('GET', `/sessions?limit=1&min_position=${position}`)).status).toBe(200);
    return recorded;
  }

  const view = async (id: string) => (await server.request('GET', `/sessions/${id}`)).body.session;
  /** A number or cost as the page's own browser formats it (the reader's locale). */
  const formatted = (page: Page, n: number) => page.evaluate((value) => new Intl.NumberFormat().format(value), n);
  const money = (page: Page, n: number) => page.evaluate((value) => new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 6 }).format(value), n);

  beforeAll(async () => {
    // An agent whose provider is never called here: GET /agent describes it without a request.
    server = await startTestServer(embedded, { modelPrices: PRICES, contextTokens: 16_000, llm: { baseURL: 'http://127.0.0.1:9/v1', apiKey: 'unused', model: 'gpt-4o-mini' } });
    browser = await launchBrowser();
    const start = async (goal: string | null) => {
      const id = (await server.request('POST', '/sessions')).body.session_id as string;
      if (goal !== null) await command(server, id, { type: 'set_goal', goal });
      return id;
    };
    ids.spender = await start('Spend tokens on the rclone backup');
    ids.frugal = await start('Ask the small model');
    ids.silent = await start('Ask a provider that reports nothing');
    ids.manual = await start('Run commands by hand');
    calls.push(
      ...(await turn(ids.spender, [
        { input_tokens: 5_000, output_tokens: 300, cached_input_tokens: 4_000, estimated_input_tokens: 4_900, duration_ms: 1_250, first_token_ms: 340, finish_reason: 'tool_calls',
          context: { budget_tokens: 7_000, estimated_tokens: 4_800, messages: 6, elided_results: 2, folded_turns: 1 } },
        { input_tokens: null, output_tokens: null, cached_input_tokens: null, estimated_input_tokens: 5_100, duration_ms: 30, first_token_ms: null, finish_reason: null,
          error: { kind: 'http', status: 429, code: 'rate_limit_exceeded', message: '429 slow down' } },
        { attempt: 2, input_tokens: 6_000, output_tokens: 50, cached_input_tokens: 0, estimated_input_tokens: 5_100, duration_ms: 900, first_token_ms: 120, finish_reason: 'stop' },
      ])),
    );
    await turn(ids.frugal, [{ model: 'qwen2.5:7b', provider_host: '127.0.0.1:11434', input_tokens: 800, output_tokens: 20, cached_input_tokens: null }]);
    await turn(ids.frugal, [{ model: 'qwen2.5:7b', provider_host: '127.0.0.1:11434', input_tokens: 900, output_tokens: 512, cached_input_tokens: null, finish_reason: 'length' }],
      { reason: 'output_limit', detail: 'the answer was cut after 512 tokens' });
    await turn(ids.silent, [{ model: 'local-unpriced', input_tokens: null, output_tokens: null, cached_input_tokens: null }]);
    // Started ten days ago and active again today: in a week's audit, with calls from before the week.
    const old = { ...server.runtime.commandDeps, clock: () => new Date(Date.now() - 10 * DAY_MS) };
    ids.returning = (await startSession(old, { actor: { role: 'operator', id: 'test' } })).session_id;
    await turn(ids.returning, [{ input_tokens: 3_000, output_tokens: 200 }], undefined, 10);
    await turn(ids.returning, [{ input_tokens: 400, output_tokens: 40 }]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("shows a session's tokens, calls and cost, each model call with its error when it failed, and follows new calls live", async () => {
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/sessions/${ids.spender}`);
    await page.getByRole('heading', { level: 1, name: 'Spend tokens on the rclone backup' }).waitFor();
    const fact = (name: string) => page.locator(`[data-fact="${name}"] dd`);
    const spent = await view(ids.spender);
    expect(spent).toMatchObject({ model_calls: 3, input_tokens: 11_000, output_tokens: 350, cached_input_tokens: 4_000 });
    expect(await fact('model_calls').innerText()).toBe('3');
    expect(await fact('tokens').innerText()).toBe(`${await formatted(page, 11_000)} / ${await formatted(page, 350)} / ${await formatted(page, 4_000)}`);
    expect(spent.cost).toBeGreaterThan(0);
    expect(await fact('cost').innerText()).toBe(await money(page, spent.cost));

    const table = page.getByRole('table', { name: 'Model calls' });
    const rows = () =>
      table.locator('tbody tr[data-call-id]').evaluateAll((trs) =>
        trs.map((tr) => Object.fromEntries([...tr.querySelectorAll('[data-field]')].map((td) => [td.getAttribute('data-field'), td.textContent?.trim()]))),
      );
    const shown = await rows();
    expect(shown.map((r) => [r.attempt, r.input_tokens, r.output_tokens, r.cached_input_tokens, r.estimated_input_tokens, r.duration, r.first_token, r.finish])).toEqual([
      ['1', await formatted(page, 5_000), '300', await formatted(page, 4_000), await formatted(page, 4_900), '1s', '340 ms', 'tool_calls'],
      ['1', '—', '—', '—', await formatted(page, 5_100), '30 ms', '—', 'failed'],
      ['2', await formatted(page, 6_000), '50', '0', await formatted(page, 5_100), '900 ms', '120 ms', 'stop'],
    ]);
    expect(shown[0]?.context).toBe(`budget ${await formatted(page, 7_000)}, est. ${await formatted(page, 4_800)}, 2 elided, 1 folded`);
    expect(shown[0]?.model).toBe('gpt-4o-mini 127.0.0.1:9');
    expect(shown[1]?.cost).toBe(await money(page, 0));

    // The failed call's error, in red, on the row after it; the others have none.
    const error = table.locator(`tr[data-error-of="${calls[1]!.call_id}"] [data-field="error"]`);
    expect(await error.innerText()).toBe('http 429 rate_limit_exceeded: 429 slow down');
    expect(await error.evaluate((el) => el.ownerDocument.defaultView?.getComputedStyle(el).color)).toBe('rgb(180, 35, 24)');
    expect(await table.locator('tr[data-error-of]').count()).toBe(1);
    await screenshot('usage-session');

    // A new turn's call shows without a reload, and the headline's sums follow.
    const [late] = await turn(ids.spender, [{ input_tokens: 100, output_tokens: 10, cached_input_tokens: 0, finish_reason: 'stop' }]);
    await table.locator(`tr[data-call-id="${late!.call_id}"]`).waitFor();
    await fact('tokens').filter({ hasText: `${await formatted(page, 11_100)} / 360 / ` }).waitFor();
    expect(await fact('model_calls').innerText()).toBe('4');
    expect(errors).toEqual([]);
  });

  it('shows tokens in the sessions list and filters it by min_tokens, kept in the address', async () => {
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/sessions`);
    const all = Object.values(ids);
    await waitForRows(page, all, 'every session');
    const cell = (id: string) => page.locator(`tr[data-session-id="${id}"] [data-field="tokens"]`).innerText();
    const spender = sum(await view(ids.spender))!;
    const frugal = sum(await view(ids.frugal))!;
    expect(frugal).toBe(2_232);
    expect(spender).toBeGreaterThan(frugal);
    expect(sum(await view(ids.returning))).toBe(3_640);
    expect(await cell(ids.spender)).toBe(await formatted(page, spender));
    expect(await cell(ids.frugal)).toBe(await formatted(page, frugal));
    expect(await cell(ids.silent)).toBe('—');
    expect(await cell(ids.manual)).toBe('—');
    await screenshot('usage-sessions');

    const box = page.getByLabel('Min tokens');
    await box.fill(String(frugal));
    await waitForRows(page, [ids.spender, ids.frugal, ids.returning], `min_tokens=${frugal}`);
    expect(page.url()).toContain(`min_tokens=${frugal}`);
    await box.fill(String(frugal + 1));
    await waitForRows(page, [ids.spender, ids.returning], `min_tokens=${frugal + 1}`);
    await box.fill(String(3_641));
    await waitForRows(page, [ids.spender], 'min_tokens=3641');
    await box.fill(String(spender + 1));
    await page.getByText('No sessions match these filters.').waitFor();
    expect(await shownIds(page)).toEqual([]);
    // 0: every session with tokens reported, none of those without.
    await box.fill('0');
    await waitForRows(page, [ids.spender, ids.frugal, ids.returning], 'min_tokens=0');
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await waitForRows(page, all, 'cleared');
    expect(page.url()).not.toContain('min_tokens');
    expect(errors).toEqual([]);

    const copied = await browser.open(`${server.url}/#/sessions?min_tokens=${frugal + 1}`);
    await waitForRows(copied.page, [ids.spender, ids.returning], 'the copied address');
    expect(await copied.page.getByLabel('Min tokens').inputValue()).toBe(String(frugal + 1));
    expect(copied.errors).toEqual([]);
  });

  it("shows the period's model usage, totals and by model, and each session's tokens and cost on the Audit page", async () => {
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/audit?since=7d`);
    await page.getByRole('heading', { name: /^Model usage/ }).waitFor();
    const usage = (await server.request('GET', '/usage?since=7d&group_by=model')).body;
    expect(usage.totals).toMatchObject({ failed_calls: 1, cost: null });
    const figure = (name: string) => page.locator(`[data-usage="${name}"] dd`).innerText();
    expect(await figure('model_calls')).toBe(await formatted(page, usage.totals.model_calls));
    expect(await figure('failed_calls')).toBe('1');
    expect(await figure('input_tokens')).toBe(await formatted(page, usage.totals.input_tokens));
    expect(await figure('output_tokens')).toBe(await formatted(page, usage.totals.output_tokens));
    expect(await figure('cached_input_tokens')).toBe(await formatted(page, 4_000));
    // One model has no price: the total is not a partial sum.
    expect(await figure('cost')).toBe('no price');
    const byModel = await page.getByRole('table', { name: 'Usage by model' }).locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())));
    expect(byModel.map((r) => r[0])).toEqual(['gpt-4o-mini', 'local-unpriced', 'qwen2.5:7b']);
    const qwen = usage.groups.find((g: { key: string }) => g.key === 'qwen2.5:7b');
    expect(byModel[2]).toEqual(['qwen2.5:7b', '2', '0', await formatted(page, 1_700), '532', '—', await money(page, qwen.cost)]);
    expect(byModel[1]?.at(-1)).toBe('no price');

    // The sessions' own sums, as `nomos audit` prints them.
    const views = await Promise.all(Object.values(ids).map(view));
    const total = (key: 'input_tokens' | 'output_tokens') => views.reduce((n, v) => n + (v[key] ?? 0), 0);
    // The usage panel's period leaves out the call made ten days ago; the sessions' sums hold it.
    expect(usage.totals.input_tokens).toBe(total('input_tokens') - 3_000);
    expect(await page.locator('[data-figure="input_tokens"] dd').innerText()).toBe(await formatted(page, total('input_tokens')));
    expect(await page.locator('[data-figure="output_tokens"] dd').innerText()).toBe(await formatted(page, total('output_tokens')));

    const listed = (id: string, field: string) => page.locator(`table[aria-label="Sessions of the period"] tr[data-id="${id}"] [data-field="${field}"]`).innerText();
    const spender = await view(ids.spender);
    expect(await listed(ids.spender, 'tokens')).toBe(`${await formatted(page, spender.input_tokens)} / ${await formatted(page, spender.output_tokens)}`);
    expect(await listed(ids.spender, 'cost')).toBe(await money(page, spender.cost));
    expect(await listed(ids.frugal, 'cost')).toBe(await money(page, (await view(ids.frugal)).cost));
    expect(await listed(ids.silent, 'tokens')).toBe('—');
    expect(await listed(ids.silent, 'cost')).toBe('no price');
    expect(await listed(ids.manual, 'cost')).toBe('—');
    // A session active in the period costs all its calls, also those made before it; the usage panel counts the period's.
    const returning = await view(ids.returning);
    expect(returning).toMatchObject({ input_tokens: 3_400, output_tokens: 240 });
    expect(await listed(ids.returning, 'tokens')).toBe(`${await formatted(page, 3_400)} / 240`);
    expect(await listed(ids.returning, 'cost')).toBe(await money(page, returning.cost));
    const withoutOld = (await server.request('GET', '/usage?since=7d&group_by=session')).body.groups.find((g: { key: string }) => g.key === ids.returning);
    expect(withoutOld.input_tokens).toBe(400);
    await screenshot('usage-audit');
    expect(errors).toEqual([]);
  });

  it("shows a turn cut at the output limit in the chat with the reason and the server's detail", async () => {
    const { page, errors } = await browser.open(`${server.url}/#/chat/${ids.frugal}`);
    const card = page.locator('.error-card[data-reason="output_limit"]');
    await card.waitFor();
    expect(await card.innerText()).toBe("The answer was cut at the model's output limit: the answer was cut after 512 tokens");
    expect(errors).toEqual([]);
  });

  it("shows the agent's state on the System page: model, context budget, and the last provider error", async () => {
    const { page, errors, screenshot } = await browser.open(`${server.url}/#/system`);
    const section = page.getByRole('region', { name: 'Agent' });
    const answer = (await server.request('GET', '/agent')).body;
    expect(answer).toMatchObject({ enabled: true, model: 'gpt-4o-mini', provider_host: '127.0.0.1:9', context: { window_tokens: 16_000, window_source: 'configured' } });
    const dd = (field: string) => section.locator(`[data-field="${field}"] dd`).innerText();
    await section.locator('[data-field="enabled"]').waitFor();
    expect(await dd('enabled')).toBe('on');
    expect(await dd('model')).toBe('gpt-4o-mini');
    expect(await dd('provider_host')).toBe('127.0.0.1:9');
    expect(await dd('ssh_key')).toBe(answer.ssh_key_configured ? 'configured' : 'not configured');
    expect(await dd('window')).toBe(`${await formatted(page, 16_000)} tokens from NOMOS_CONTEXT_TOKENS`);
    const { context } = answer;
    for (const [field, value] of [['reserve', context.reserve_tokens], ['budget', context.budget_tokens], ['system_prompt', context.system_prompt_tokens], ['tools', context.tools_tokens]] as const) {
      expect(value, field).toBeGreaterThan(0);
      expect(await dd(field), field).toBe(await formatted(page, value));
    }
    expect(context.session_tokens).toBe(context.budget_tokens - context.system_prompt_tokens - context.tools_tokens);
    expect(await dd('session_tokens')).toBe(await formatted(page, context.session_tokens));
    // The rate-limited call of the first session is the last failure any provider answered.
    const last = section.locator('[data-field="last_provider_error"]');
    expect(await last.locator('p.bad').innerText()).toBe('429 · rate_limit_exceeded · 429 slow down');
    expect(await last.getByRole('link').getAttribute('href')).toBe(`#/sessions/${ids.spender}`);
    await screenshot('usage-system');
    expect(errors).toEqual([]);
  });
});
