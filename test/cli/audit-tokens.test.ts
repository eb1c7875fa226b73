// `nomos audit` reports the model's tokens: per session (a line of its own, only where some were reported) and in
// the summary, as text and in --json; the real CLI against a real server whose sessions' model calls are recorded
// through the command layer as the agent records them. The wording of a part reported alone, without a server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuditSession, buildReport, formatEntry, formatSummary, toEntry } from '../../src/cli/audit-report.ts';
import type { ModelCall } from '../../src/domain/session/events.ts';
import { execNomos } from '../support/cli-process.ts';
import { databases } from '../support/databases.ts';
import { recordTurn } from '../support/model-calls.ts';
import { type TestServer, startTestServer } from '../support/server.ts';


/** One session's entry in the text report: from its `Session:` line to the blank line after it. */
const entryOf = (stdout: string, id: string) => stdout.split('\n\n').find((b) => b.startsWith(`Session: ${id.slice(0, 8)} `));

describe.each(databases)('nomos audit tokens on $name', (database) => {
  let server: TestServer;
  let env: Record<string, string>;
  const ids = { spender: '', frugal: '', silent: '', manual: '' };

  const turn = async (session: string, calls: Array<Partial<ModelCall>>) => (await recordTurn(server.runtime.commandDeps, session, calls)).position;

  beforeAll(async () => {
    server = await startTestServer(database);
    env = { NOMOS_URL: server.url };
    const start = async () => (await server.request('POST', '/sessions')).body.session_id as string;
    ids.spender = await start();
    ids.frugal = await start();
    ids.silent = await start();
    ids.manual = await start();
    await turn(ids.spender, [
      { input_tokens: 5_000, output_tokens: 300 },
      { input_tokens: null, output_tokens: null, cached_input_tokens: null, error: { kind: 'http', status: 429, code: 'rate_limit_exceeded', message: 'slow down' } },
    ]);
    await turn(ids.spender, [{ attempt: 1, input_tokens: 6_000, output_tokens: 50 }]);
    await turn(ids.frugal, [{ model: 'qwen2.5:7b', input_tokens: 800, output_tokens: 20 }]);
    // A provider that reports no usage: the call counts, its tokens stay unknown.
    const last = await turn(ids.silent, [{ input_tokens: null, output_tokens: null, cached_input_tokens: null }]);
    expect((await server.request('GET', `/sessions?min_position=${last}&limit=1`)).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("prints each session's reported tokens on a line of its own, and their sum in the summary", async () => {
    const run = await execNomos(['audit', '--since', '1h'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(entryOf(run.stdout, ids.spender)).toMatch(/\n {2}Outcome ⏳ \(active\) · Blocker: none · Severity: none\n {2}Tokens: 11000 in · 350 out$/);
    expect(entryOf(run.stdout, ids.frugal)).toMatch(/\n {2}Tokens: 800 in · 20 out$/);
    // Nothing reported, or no model call at all: no Tokens line.
    for (const id of [ids.silent, ids.manual]) expect(entryOf(run.stdout, id)).toMatch(/\n {2}Outcome ⏳ \(active\) · Blocker: none · Severity: none$/);
    expect(run.stdout).toContain('Summary: 4 sessions');
    expect(run.stdout).toMatch(/\n {2}Median tool calls per session: 0\n {2}Tokens: 11800 in · 370 out\n$/);
  });

  it('carries the tokens in --json, null where none were reported', async () => {
    const run = await execNomos(['audit', '--since', '1h', '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    const tokens = Object.fromEntries(report.sessions.map((s: { id: string; input_tokens: unknown; output_tokens: unknown }) => [s.id, [s.input_tokens, s.output_tokens]]));
    expect(tokens).toEqual({ [ids.spender]: [11_000, 350], [ids.frugal]: [800, 20], [ids.silent]: [null, null], [ids.manual]: [null, null] });
    expect(report.summary).toMatchObject({ sessions: 4, input_tokens: 11_800, output_tokens: 370 });
  });
});

describe("the audit report's tokens", () => {
  const base: AuditSession = {
    id: 'a51e2086-a816-4206-a556-dbca362cdda6', title: 'a session', goal: null, status: 'done', outcome: 'success', blocker: null,
    message_count: 2, user_message_count: 1, assistant_message_count: 1, tool_call_count: 0, turn_count: 1, top_tools: [], input_tokens: null, output_tokens: null,
  };

  it('names a part the provider did not report, and sums only what was', () => {
    expect(formatEntry(toEntry({ ...base, input_tokens: 500 }))).toMatch(/\n {2}Tokens: 500 in · n\/a out$/);
    const { summary } = buildReport([{ ...base, input_tokens: 500 }, { ...base, input_tokens: 7, output_tokens: 3 }, base], 1);
    expect(summary).toMatchObject({ input_tokens: 507, output_tokens: 3 });
    expect(formatSummary(summary)).toMatch(/\n {2}Tokens: 507 in · 3 out$/);
  });

  it('says so when no session reported any', () => {
    const { summary } = buildReport([base, base], 1);
    expect(summary).toMatchObject({ input_tokens: null, output_tokens: null });
    expect(formatSummary(summary)).toMatch(/\n {2}Tokens: none reported$/);
    expect(formatEntry(toEntry(base))).not.toContain('Tokens');
  });
});
