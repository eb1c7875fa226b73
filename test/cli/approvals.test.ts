// `nomos approvals` as an operator runs it: the real CLI in a child process against a real server (its commands
// "run" on a fleet stand-in). list shows the pending ones with rule, reason and time left; approve runs the
// command once and prints how it ended; deny records the reason; watch prints a line for each new one. An
// unknown id, an approval decided already and a role that may not decide each end non-zero, saying so, and
// change nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { execNomos, killAll, start, BIN, until, within } from '../support/cli-process.ts';
import { databases } from '../support/databases.ts';
import { instantExecutor } from '../support/instant-executor.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const ALICE = 'op-secret-1-long-enough-for-32-chars';
const BOB = 'op-secret-2-long-enough-for-32-chars';
const AUDITOR = 'audit-secret-1-long-enough-for-32-chars';
const tokens = parseTokens(`operator:alice:${ALICE},operator:bob:${BOB},auditor:carol:${AUDITOR}`);
const as = (token: string) => ({ authorization: `Bearer ${token}` });

describe.each(databases)('nomos approvals on $name', (database) => {
  let server: TestServer;
  let executor: ReturnType<typeof instantExecutor>;
  let env: Record<string, string>;

  /** A config mutation on a registered container, in a session of its own: it waits for an operator. */
  const asked = async (command: string): Promise<{ session: string; approval_id: string }> => {
    const session = (await server.request('POST', '/sessions', undefined, as(ALICE))).body.session_id as string;
    const queued = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target: 'lxc:box', command }, as(ALICE));
    expect(queued.body, JSON.stringify(queued.body)).toMatchObject({ status: 'approval_required', verdict: { risk_class: 'config_mutation' } });
    return { session, approval_id: queued.body.approval_id as string };
  };
  const approval = async (id: string) => {
    const { body } = await server.request('GET', '/approvals?limit=500', undefined, as(ALICE));
    return (body.approvals as Array<Record<string, any>>).find((a) => a.id === id);
  };

  beforeAll(async () => {
    executor = instantExecutor();
    server = await startTestServer(database, { tokens, executor });
    const reg = await server.request(
      'POST',
      '/entities',
      {
        entities: [
          { slug: 'host:peer', type: 'host', ssh: { host: '127.0.0.1', port: 22, user: 'root' } },
          { slug: 'lxc:box', type: 'lxc', parent: 'host:peer', pve_id: 132 },
        ],
      },
      as(ALICE),
    );
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    env = { NOMOS_URL: server.url, NOMOS_TOKEN: ALICE };
  }, 60_000);
  afterAll(async () => {
    killAll();
    await server?.close();
  });

  it('list: none pending says so; then each pending approval with its rule, reason and time left, oldest first', async () => {
    const none = await execNomos(['approvals', 'list'], env);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout.trim()).toBe('no pending approvals');

    const first = await asked('chown :0 /srv/data');
    const second = await asked('chmod 640 /srv/data/secret');
    const run = await execNomos(['approvals', 'list'], env);
    expect(run.code, run.stderr).toBe(0);
    const [header, ...rows] = run.stdout.trimEnd().split('\n');
    expect(header?.split(/\s{2,}/)).toEqual(['ID', 'SESSION', 'COMMAND', 'TARGET', 'RISK', 'RULE', 'REASON', 'EXPIRES IN']);
    expect(rows).toHaveLength(2);
    const row = await approval(first.approval_id);
    expect(row?.verdict?.reason).toBeTruthy();
    // The rule is the one that asked, with the policy version in force (classifier/v0: no policy applied).
    const rule = `${row?.rule_id ?? row?.verdict?.rule}/v${row?.policy_version}`;
    expect(rows[0]).toContain(first.approval_id);
    expect(rows[0]).toContain(first.session.slice(0, 8));
    expect(rows[0]).toMatch(/chown :0 \/srv\/data\s+lxc:box\s+config_mutation/);
    expect(rows[0]).toContain(rule);
    expect(rows[0]).toContain(String(row?.verdict?.reason).slice(0, 40));
    // The default time to live is 15 minutes: a few seconds of it are gone.
    expect(rows[0]).toMatch(/1[45]m \d\ds$/);
    expect(rows[1]).toContain(second.approval_id);

    const json = await execNomos(['approvals', 'list', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout) as { approvals: Array<{ id: string }>; as_of_position: number };
    expect(parsed.approvals.map((a) => a.id)).toEqual([first.approval_id, second.approval_id]);

    // Tidy for the next tests: nothing of these stays pending.
    for (const a of [first, second]) expect((await server.request('POST', `/approvals/${a.approval_id}/deny`, { reason: 'tidy' }, as(BOB))).status).toBe(200);
  }, 60_000);

  it('approve ID: runs the command once and prints how it ended; a second approve says by whom it was decided, and nothing runs again', async () => {
    const { approval_id } = await asked('chown :0 /srv/approved');
    const ran = executor.started.length;
    const run = await execNomos(['approvals', 'approve', approval_id], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^approved ${approval_id} \\(execution [0-9a-f-]{36}\\)\\n {2}✓ succeeded · exit 0\\n {4}out│ ran chown :0 /srv/approved\\n`));
    expect(executor.started.slice(ran)).toEqual(['chown :0 /srv/approved']);
    expect(await approval(approval_id)).toMatchObject({ status: 'granted', decided_by: { role: 'operator', id: 'alice' } });

    const again = await execNomos(['approvals', 'approve', approval_id], { ...env, NOMOS_TOKEN: BOB });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(`nomos: approval ${approval_id} was already approved by operator:alice at `);
    expect(again.stderr).toContain('(409 approval_decided)');
    const denyToo = await execNomos(['approvals', 'deny', approval_id, '--reason', 'too late'], env);
    expect(denyToo.code).not.toBe(0);
    expect(denyToo.stderr).toContain(`approval ${approval_id} was already approved by operator:alice`);
    expect(executor.started.slice(ran)).toEqual(['chown :0 /srv/approved']);
    expect(await approval(approval_id)).toMatchObject({ status: 'granted' });
  }, 60_000);

  it('deny ID --reason: nothing runs and the reason is recorded; without --reason it is refused before asking the server', async () => {
    const { approval_id } = await asked('chown :0 /srv/denied');
    const ran = executor.started.length;
    const bare = await execNomos(['approvals', 'deny', approval_id], env);
    expect(bare.code).not.toBe(0);
    expect(bare.stderr).toMatch(/required option '--reason <text>' not specified/);
    expect(await approval(approval_id)).toMatchObject({ status: 'pending' });

    const run = await execNomos(['approvals', 'deny', approval_id, '--reason', 'not during business hours'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(`denied ${approval_id}: not during business hours`);
    expect(await approval(approval_id)).toMatchObject({ status: 'denied', decision_reason: 'not during business hours', decided_by: { role: 'operator', id: 'alice' } });
    expect(executor.started.length).toBe(ran);
  }, 60_000);

  it('an unknown id, a malformed one and a role that may not decide: a clear message, a non-zero exit, nothing changed', async () => {
    const unknown = randomUUID();
    const missing = await execNomos(['approvals', 'approve', unknown], env);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain(`nomos: approval ${unknown}: no approval ${unknown} (404 approval_not_found)`);
    const missingDeny = await execNomos(['approvals', 'deny', unknown, '--reason', 'x'], env);
    expect(missingDeny.code).not.toBe(0);
    expect(missingDeny.stderr).toContain('(404 approval_not_found)');

    const malformed = await execNomos(['approvals', 'approve', 'not-an-id'], env);
    expect(malformed.code).not.toBe(0);
    expect(malformed.stderr).toMatch(/approval not-an-id: .*the id must be a UUID.*\(400/);

    const { approval_id } = await asked('chown :0 /srv/forbidden');
    const ran = executor.started.length;
    for (const args of [['approve', approval_id], ['deny', approval_id, '--reason', 'no']]) {
      const auditor = await execNomos(['approvals', ...args], { ...env, NOMOS_TOKEN: AUDITOR });
      expect(auditor.code).not.toBe(0);
      expect(auditor.stderr).toMatch(new RegExp(`approval ${approval_id}: role auditor .* \\(403 forbidden\\)`));
    }
    const noToken = await execNomos(['approvals', 'approve', approval_id], { ...env, NOMOS_TOKEN: '' });
    expect(noToken.code).not.toBe(0);
    expect(noToken.stderr).toContain('(401');
    expect(await approval(approval_id)).toMatchObject({ status: 'pending' });
    expect(executor.started.length).toBe(ran);
    // An auditor may read the queue all the same.
    const list = await execNomos(['approvals', 'list'], { ...env, NOMOS_TOKEN: AUDITOR });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(approval_id);
    expect((await server.request('POST', `/approvals/${approval_id}/deny`, { reason: 'tidy' }, as(BOB))).status).toBe(200);
  }, 60_000);

  it('an unreachable server: a non-zero exit naming the address', async () => {
    const run = await execNomos(['approvals', 'list'], { ...env, NOMOS_URL: 'http://127.0.0.1:9' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('cannot reach the Nomos server at http://127.0.0.1:9');
  }, 60_000);

  it('watch: a line for each pending one, then one for each new one as it is asked, each once; Ctrl-C ends it', async () => {
    const waiting = await asked('chown :0 /srv/waiting');
    const decided = await asked('chown :0 /srv/decided-first');
    expect((await server.request('POST', `/approvals/${decided.approval_id}/deny`, { reason: 'no' }, as(BOB))).status).toBe(200);
    const watch = start(process.execPath, [BIN, 'approvals', 'watch'], env);
    await until(() => watch.output().includes('watching for approvals'), 30_000, 'watch started');
    const lines = () => watch.output().split('\n').filter((l) => /^\d\d:\d\d:\d\d {2}/.test(l));
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d {2}${waiting.approval_id} {2}chown :0 /srv/waiting on lxc:box {2}config_mutation · rule \\S+/v\\d+ · .+ · expires in 1[45]m \\d\\ds$`));

    const fresh = await asked('chmod 600 /srv/fresh');
    await until(() => lines().length === 2, 15_000, 'a line for the new approval');
    expect(lines()[1]).toContain(`${fresh.approval_id}  chmod 600 /srv/fresh on lxc:box  config_mutation · rule `);
    // Deciding one moves the read models too, but prints nothing: only new approvals get a line.
    expect((await server.request('POST', `/approvals/${fresh.approval_id}/deny`, { reason: 'tidy' }, as(BOB))).status).toBe(200);
    const another = await asked('chmod 600 /srv/another');
    await until(() => lines().length === 3, 15_000, 'a line for the next approval');
    expect(lines()[2]).toContain(another.approval_id);
    expect(watch.output()).not.toContain(decided.approval_id);

    process.kill(watch.child.pid!, 'SIGINT');
    const exit = await within(watch.exit, 10_000, 'watch after Ctrl-C');
    expect(exit.code, watch.output()).toBe(0);
    for (const a of [waiting, another]) expect((await server.request('POST', `/approvals/${a.approval_id}/deny`, { reason: 'tidy' }, as(BOB))).status).toBe(200);
  }, 60_000);
});
