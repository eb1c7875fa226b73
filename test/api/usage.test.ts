// What model calls cost, in the read models: a session's calls one by one (failed ones with their error), the
// sums on the session, the sessions list's min_tokens filter, GET /usage by model, day and session, and costs
// priced by NOMOS_MODEL_PRICES; bad queries refused. Over real HTTP on both databases; the calls are recorded
// through the command layer as the agent records them.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelCall } from '../../src/domain/session/events.ts';
import { databases } from '../support/databases.ts';
import { FIT, recordTurn } from '../support/model-calls.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

describe.each(databases)('model usage read models on $name', (database) => {
  let server: TestServer;
  let spender: string;
  let frugal: string;
  let silent: string;
  let at: number;

  const turn = async (session: string, calls: Array<Partial<ModelCall>>) => {
    at = (await recordTurn(server.runtime.commandDeps, session, calls)).position;
  };

  beforeAll(async () => {
    server = await startTestServer(database, { modelPrices: { 'gpt-4o-mini': { input: 0.15, output: 0.6, cached_input: 0.075 }, 'qwen2.5:7b': { input: 0, output: 0 } } });
    const start = async () => (await server.request('POST', '/sessions')).body.session_id as string;
    spender = await start();
    frugal = await start();
    silent = await start();
    await turn(spender, [
      { input_tokens: 5_000, output_tokens: 300, cached_input_tokens: 4_000 },
      { input_tokens: null, output_tokens: null, cached_input_tokens: null, duration_ms: 30, first_token_ms: null, finish_reason: null, error: { kind: 'http', status: 429, code: 'rate_limit_exceeded', message: '429 slow down' } },
      { attempt: 2, input_tokens: 6_000, output_tokens: 50, cached_input_tokens: 0, finish_reason: 'stop' },
    ]);
    await turn(frugal, [{ model: 'qwen2.5:7b', provider_host: '127.0.0.1:11434', input_tokens: 800, output_tokens: 20, cached_input_tokens: null }]);
    // A provider that reports nothing: the calls count, the tokens stay unknown.
    await turn(silent, [{ model: 'local-unpriced', input_tokens: null, output_tokens: null, cached_input_tokens: null }]);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("lists a session's calls in order, failed ones with their error, priced", async () => {
    const res = await server.request('GET', `/sessions/${spender}/model_calls?min_position=${at}`);
    expect(res.status).toBe(200);
    expect(res.body.map((c: ModelCall) => [c.attempt, c.input_tokens, c.output_tokens, c.error?.status ?? null])).toEqual([
      [1, 5_000, 300, null],
      [1, null, null, 429],
      [2, 6_000, 50, null],
    ]);
    expect(res.body[1]).toMatchObject({ error: { kind: 'http', code: 'rate_limit_exceeded', message: '429 slow down' }, cost: 0, finish_reason: null });
    expect(res.body[0]).toMatchObject({ model: 'gpt-4o-mini', provider_host: '127.0.0.1:9', context: FIT, duration_ms: 250, first_token_ms: 40, estimated_input_tokens: 990 });
    // 1 000 uncached at 0.15, 4 000 cached at 0.075, 300 out at 0.6, per million.
    expect(res.body[0].cost).toBeCloseTo((1_000 * 0.15 + 4_000 * 0.075 + 300 * 0.6) / 1e6, 12);
  });

  it('sums the provider figures on the session and in the list; a session with none reported keeps null tokens', async () => {
    const one = await server.request('GET', `/sessions/${spender}?min_position=${at}`);
    expect(one.body.session).toMatchObject({ model_calls: 3, input_tokens: 11_000, output_tokens: 350, cached_input_tokens: 4_000 });
    expect(one.body.session.cost).toBeCloseTo((7_000 * 0.15 + 4_000 * 0.075 + 350 * 0.6) / 1e6, 12);
    const quiet = await server.request('GET', `/sessions/${silent}`);
    expect(quiet.body.session).toMatchObject({ model_calls: 1, input_tokens: null, output_tokens: null, cost: null });
    const list = await server.request('GET', `/sessions?fields=model_calls,input_tokens,output_tokens,cached_input_tokens&min_position=${at}`);
    const byId = Object.fromEntries(list.body.sessions.map((s: { id: string }) => [s.id, s]));
    expect(byId[frugal]).toEqual({ id: frugal, model_calls: 1, input_tokens: 800, output_tokens: 20, cached_input_tokens: null });
  });

  it('shows a session no call was recorded for (as a log from before they were) with nulls and no calls, not an error', async () => {
    const before = (await server.request('POST', '/sessions')).body.session_id as string;
    const view = await server.request('GET', `/sessions/${before}`);
    expect(view.status).toBe(200);
    expect(view.body.session).toMatchObject({ model_calls: null, input_tokens: null, output_tokens: null, cached_input_tokens: null, cost: null });
    expect((await server.request('GET', `/sessions/${before}/model_calls`)).body).toEqual([]);
  });

  it('filters the list on tokens (min_tokens), leaving out sessions with none reported', async () => {
    const ids = async (q: string) => ((await server.request('GET', `/sessions?${q}`)).body.sessions as Array<{ id: string }>).map((s) => s.id).sort();
    expect(await ids('min_tokens=11350')).toEqual([spender]);
    expect(await ids('min_tokens=11351')).toEqual([]);
    expect(await ids('min_tokens=0')).toEqual([spender, frugal].sort());
    const bad = await server.request('GET', '/sessions?min_tokens=lots');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('min_tokens');
  });

  it('totals by model, by day and by session, each group with its models and a cost only where every model is priced', async () => {
    const byModel = await server.request('GET', `/usage?group_by=model&min_position=${at}`);
    expect(byModel.status).toBe(200);
    expect(byModel.body.groups.map((g: { key: string; model_calls: number; failed_calls: number; input_tokens: number | null }) => [g.key, g.model_calls, g.failed_calls, g.input_tokens])).toEqual([
      ['gpt-4o-mini', 3, 1, 11_000],
      ['local-unpriced', 1, 0, null],
      ['qwen2.5:7b', 1, 0, 800],
    ]);
    expect(byModel.body.totals).toMatchObject({ model_calls: 5, failed_calls: 1, input_tokens: 11_800, output_tokens: 370, cached_input_tokens: 4_000, cost: null });
    const bySession = await server.request('GET', '/usage?group_by=session');
    const frugalGroup = bySession.body.groups.find((g: { key: string }) => g.key === frugal);
    expect(frugalGroup).toMatchObject({ model_calls: 1, cost: 0, models: [{ model: 'qwen2.5:7b', cost: 0 }] });
    const byDay = await server.request('GET', '/usage?group_by=day&since=1d');
    expect(byDay.body.groups).toHaveLength(1);
    expect(byDay.body.groups[0].key).toBe(new Date().toISOString().slice(0, 10));
    expect(byDay.body.groups[0].model_calls).toBe(5);
    const future = await server.request('GET', `/usage?since=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`);
    expect(future.body).toMatchObject({ groups: [], totals: { model_calls: 0, input_tokens: null } });
  });

  it('refuses bad queries with the reason and a 4xx, and an unknown session with 404', async () => {
    for (const q of ['group_by=week', 'since=yesterday', 'bogus=1']) {
      const res = await server.request('GET', `/usage?${q}`);
      expect(res.status, q).toBe(400);
    }
    expect((await server.request('GET', `/sessions/${randomUUID()}/model_calls`)).status).toBe(404);
    expect((await server.request('GET', '/sessions/not-a-uuid/model_calls')).status).toBe(400);
  });

  it('keeps a deleted session out of /usage unless include_deleted=true', async () => {
    const deleted = await server.request('DELETE', `/sessions/${frugal}`, { reason: 'a test' });
    expect(deleted.status).toBe(200);
    const after = deleted.body.position as number;
    const without = await server.request('GET', `/usage?group_by=session&min_position=${after}`);
    expect(without.body.groups.map((g: { key: string }) => g.key)).not.toContain(frugal);
    const withDeleted = await server.request('GET', `/usage?group_by=session&include_deleted=true&min_position=${after}`);
    expect(withDeleted.body.groups.map((g: { key: string }) => g.key)).toContain(frugal);
  });
});

describe('NOMOS_MODEL_PRICES', () => {
  it('is read as prices per model, and a bad value stops the start naming the problem', async () => {
    const { loadConfig } = await import('../../src/config.ts');
    expect(loadConfig({ NOMOS_MODEL_PRICES: '{"m": {"input": 1, "output": 2}}' }).modelPrices).toEqual({ m: { input: 1, output: 2 } });
    expect(loadConfig({}).modelPrices).toEqual({});
    expect(() => loadConfig({ NOMOS_MODEL_PRICES: '{m: 1}' })).toThrow(/NOMOS_MODEL_PRICES is not JSON/);
    expect(() => loadConfig({ NOMOS_MODEL_PRICES: '{"m": {"input": -1, "output": 2}}' })).toThrow(/NOMOS_MODEL_PRICES: m\.input/);
    expect(() => loadConfig({ NOMOS_MODEL_PRICES: '{"m": {"input": 1, "output": 2, "per": "token"}}' })).toThrow(/NOMOS_MODEL_PRICES/);
  });
});
