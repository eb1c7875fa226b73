// The approval prompt of `nomos chat`, in a real pseudo-terminal against a real server (commands "run" on a fleet
// stand-in; the approval is asked through the API and the chat continues its session): the prompt shows the rule,
// the reason and the time left; Enter alone decides nothing; an approval decided elsewhere while the prompt is up
// drops it and says by whom; leaving the prompt (Ctrl-C, Ctrl-D, the end of a piped input) says it is still pending.
import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { databases } from '../support/databases.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { closeTerminals, openTerminal } from '../support/terminal.ts';

const database = databases[0]!;
const ALICE = 'op-secret-1-long-enough-for-32-chars';
const BOB = 'op-secret-2-long-enough-for-32-chars';
const tokens = parseTokens(`operator:alice:${ALICE},operator:bob:${BOB}`);
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe(`nomos chat's approval prompt on ${database.name}`, () => {
  let server: TestServer;
  let executor: ReturnType<typeof instantExecutor>;
  let env: Record<string, string>;

  /** A session waiting on an operator for `command` (a config mutation on a container). */
  const asked = async (command: string) => {
    const session = (await server.request('POST', '/sessions', undefined, as(ALICE))).body.session_id as string;
    const queued = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target: 'lxc:box', command }, as(ALICE));
    expect(queued.body, JSON.stringify(queued.body)).toMatchObject({ status: 'approval_required' });
    const id = queued.body.approval_id as string;
    const { body } = await server.request('GET', `/approvals?session_id=${session}&min_position=${queued.body.position}`, undefined, as(ALICE));
    const row = (body.approvals as Array<Record<string, any>>).find((a) => a.id === id)!;
    return { session, id, row };
  };
  const statusOf = async (id: string) => {
    const { body } = await server.request('GET', '/approvals?limit=500', undefined, as(ALICE));
    return (body.approvals as Array<Record<string, any>>).find((a) => a.id === id)?.status as string;
  };
  const prompt = (command: string) => new RegExp(`approve "${escape(command)}" on lxc:box\\? \\(expires in 1[45]m \\d\\ds\\) \\[y/n, or a reason to deny\\] `);

  beforeAll(async () => {
    executor = instantExecutor();
    server = await startTestServer(database, { tokens, executor });
    const reg = await server.request(
      'POST',
      '/entities',
      { entities: [{ slug: 'host:peer', type: 'host', ssh: { host: '127.0.0.1', port: 22, user: 'root' } }, { slug: 'lxc:box', type: 'lxc', parent: 'host:peer', pve_id: 132 }] },
      as(ALICE),
    );
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    env = { NOMOS_URL: server.url, NOMOS_TOKEN: ALICE };
  }, 60_000);
  afterEach(closeTerminals);
  afterAll(async () => {
    await server?.close();
  });

  it('shows the rule, the reason and the time left; Enter alone asks again; approved elsewhere, it is dropped and says by whom', async () => {
    const command = 'chown :0 /srv/stale';
    const { session, id, row } = await asked(command);
    const rule = `${row.rule_id ?? row.verdict.rule}/v${row.policy_version}`;
    expect(row.verdict.reason).toBeTruthy();
    const t = openTerminal(['chat', '--session', session, '--continuation-wait', '1'], env);
    const shownAt = await t.waitFor(prompt(command));
    expect(t.screen().slice(0, shownAt)).toContain(`  ⏸ approval needed: ${command} on lxc:box (config_mutation)\n    rule ${rule} · ${row.verdict.reason}\n`);

    // Enter alone: a hint, the prompt again, and nothing decided.
    t.type('\r');
    const hintAt = await t.waitFor(/\(type y to approve, n or a reason to deny; Enter alone decides nothing\)\n/, shownAt);
    const againAt = await t.waitFor(prompt(command), hintAt);
    t.type('\r');
    await t.waitFor(prompt(command), againAt + 10);
    expect(t.screen().match(/Enter alone decides nothing/g)).toHaveLength(1);
    expect(await statusOf(id)).toBe('pending');
    expect(executor.started).not.toContain(command);

    // Another operator approves it through the API while the prompt is up.
    const before = t.screen().length;
    expect((await server.request('POST', `/approvals/${id}/approve`, {}, as(BOB))).status).toBe(200);
    const droppedAt = await t.waitFor(new RegExp(`"${escape(command)}" on lxc:box: approved by operator:bob in another client \\(no longer asking\\)\\n`), before, 15_000);
    await t.waitFor(/you> /, droppedAt);
    expect(executor.started.filter((c) => c === command)).toHaveLength(1);
    // Nothing was answered from this terminal: the approval is bob's.
    expect(t.screen().slice(before)).not.toMatch(/approving…|denied:/);
    t.type('/quit\r');
    expect(await t.exited).toBe(0);
  }, 60_000);

  it('denied elsewhere: dropped, with who denied it and why', async () => {
    const command = 'chown :0 /srv/denied-elsewhere';
    const { session, id } = await asked(command);
    const t = openTerminal(['chat', '--session', session, '--continuation-wait', '1'], env);
    const shownAt = await t.waitFor(prompt(command));
    expect((await server.request('POST', `/approvals/${id}/deny`, { reason: 'not during business hours' }, as(BOB))).status).toBe(200);
    await t.waitFor(/denied by operator:bob in another client: not during business hours \(no longer asking\)\n/, shownAt, 15_000);
    await t.waitFor(/you> /, shownAt);
    t.type('/quit\r');
    expect(await t.exited).toBe(0);
    expect(executor.started).not.toContain(command);
  }, 60_000);

  for (const [how, key] of [
    ['Ctrl-C', '\x03'],
    ['Ctrl-D', '\x04'],
  ] as const) {
    it(`${how} at the prompt ends the chat and says the approval is still pending, and how to answer it`, async () => {
      const command = `chown :0 /srv/left-${how}`;
      const { session, id } = await asked(command);
      const t = openTerminal(['chat', '--session', session], env);
      const shownAt = await t.waitFor(prompt(command));
      t.type(key);
      await t.waitFor(new RegExp(`approval ${id} is still pending \\(expires in 1[45]m \\d\\ds\\): nomos approvals approve ${id}, or nomos approvals deny ${id} --reason TEXT\\n`), shownAt, 10_000);
      expect(await t.exited).toBe(0);
      expect(await statusOf(id)).toBe('pending');
    }, 60_000);
  }

  it('with a piped input: an empty line asks again, the end of the input leaves it pending and says so', async () => {
    const command = 'chown :0 /srv/piped';
    const { session, id } = await asked(command);
    const child = spawn(process.execPath, ['bin/nomos.mjs', 'chat', '--session', session], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    // Listened for from the start: the chat may well have exited before the last output is matched.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const waitFor = async (pattern: RegExp) => {
      for (let i = 0; i < 600 && !pattern.test(output); i++) await new Promise((r) => setTimeout(r, 50));
      expect(output).toMatch(pattern);
    };
    await waitFor(prompt(command));
    child.stdin.write('\n');
    await waitFor(/Enter alone decides nothing\)\napprove "/);
    child.stdin.end();
    await waitFor(new RegExp(`approval ${id} is still pending`));
    expect(await exited).toBe(0);
    expect(await statusOf(id)).toBe('pending');
    expect(executor.started).not.toContain(command);
  }, 60_000);
});
