// Sessions written through the HTTP API for the console's sessions tests, the way an agent writes them, and the
// page-side helpers those tests share (which session rows a page shows, waiting for them).
import type { Page } from 'playwright-core';
import type { TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

export interface ToolCallSpec {
  id: string;
  name: string;
  args: Record<string, unknown>;
  result?: unknown;
  error?: string;
}

export interface SessionSpec {
  user?: string;
  goal?: string;
  plan?: string[];
  /** Plan steps moved on, in order: [seq, status]. */
  steps?: Array<[number, 'running' | 'done' | 'skipped' | 'failed']>;
  calls?: ToolCallSpec[];
  assistant?: string;
  outcome?: 'success' | 'partial' | 'failed';
  summary?: string;
}

/** Sends one command and fails loudly with the server's answer when it is refused. */
export async function command(server: TestServer, id: string, body: Record<string, unknown>): Promise<any> {
  const res = await server.request('POST', `/sessions/${id}/commands`, body);
  if (res.status !== 200) throw new Error(`${String(body.type)} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Writes a whole session and answers its id and the position of its last event. */
export async function writeSession(server: TestServer, spec: SessionSpec): Promise<{ id: string; position: number }> {
  const started = await server.request('POST', '/sessions');
  if (started.status !== 201) throw new Error(`POST /sessions answered ${started.status}`);
  const id: string = started.body.session_id;
  let position: number = started.body.position;
  const send = async (body: Record<string, unknown>) => (position = (await command(server, id, body)).position);
  if (spec.user) await send({ type: 'post_user_message', text: spec.user });
  if (spec.goal) await send({ type: 'set_goal', goal: spec.goal });
  if (spec.plan) await send({ type: 'propose_plan', steps: spec.plan.map((title) => ({ title })) });
  for (const [seq, status] of spec.steps ?? []) await send({ type: 'update_plan_step', seq, status });
  for (const call of spec.calls ?? []) {
    await send({ type: 'record_tool_call_requested', tool_call_id: call.id, name: call.name, args: call.args });
    await send({ type: 'record_tool_call_completed', tool_call_id: call.id, ...(call.result !== undefined && { result: call.result }), ...(call.error !== undefined && { error: call.error }) });
  }
  if (spec.assistant) await send({ type: 'record_assistant_message', text: spec.assistant });
  if (spec.outcome) await send({ type: 'complete_task', outcome: spec.outcome, summary: spec.summary ?? spec.outcome });
  return { id, position };
}

/** Waits until the read models have applied `position`, so a page opened now shows it. */
export async function applied(server: TestServer, position: number): Promise<void> {
  const res = await server.request('GET', `/sessions?limit=1&min_position=${position}`);
  if (res.status !== 200) throw new Error(`read models did not reach ${position}: ${JSON.stringify(res.body)}`);
}

/** The ids of the session rows the page shows now, in order. */
export async function shownIds(page: Page): Promise<string[]> {
  return page.locator('table[aria-label="Sessions"] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session-id') ?? ''));
}

/** Waits until the page shows exactly these sessions (in any order), and answers them in the page's order. */
export async function waitForRows(page: Page, expected: string[], what: string): Promise<string[]> {
  const want = [...expected].sort().join(',');
  let last: string[] = [];
  try {
    return await until(what, async () => {
      last = await shownIds(page);
      return [...last].sort().join(',') === want ? last : undefined;
    }, 10_000, 50);
  } catch (error) {
    throw new Error(`${(error as Error).message}: showing ${JSON.stringify(last)}, wanted ${JSON.stringify(expected)}`, { cause: error });
  }
}
