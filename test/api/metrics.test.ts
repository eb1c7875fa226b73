// GET /metrics in the Prometheus text format: refusals counted by rule from the error mapping, gauges read
// from the read models, a position and lag line for every projection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { SshExecutor } from '../../src/adapters/ssh/executor.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { ed25519KeyPair } from '../support/ssh-peer.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the exposition format strictly: every line is a comment or `name{labels} value`. */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) {
      if (line !== '') expect(line).toMatch(/^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* \S/);
      continue;
    }
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)$/.exec(line);
    expect(match, line).not.toBeNull();
    const [, name, labelText, value] = match!;
    const labels: Record<string, string> = {};
    for (const pair of (labelText ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: name!, labels, value: Number(value) });
  }
  return samples;
}

describe.each(databases)('metrics on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    // A key is configured (a run would be refused as unreachable without one), but nothing here is approved, so nothing connects.
    const executor = new SshExecutor({ privateKey: Buffer.from(ed25519KeyPair().private) });
    server = await startTestServer(database, { executor, tokens: [{ role: 'auditor', name: 'audit', token: 'auditor-token-1' }, { role: 'operator', name: 'ops', token: 'operator-token-1' }] });
  });
  afterAll(async () => {
    await server?.close();
  });
  const operator = { authorization: 'Bearer operator-token-1' };
  const auditor = { authorization: 'Bearer auditor-token-1' };

  async function scrape(): Promise<Sample[]> {
    const res = await fetch(`${server.url}/metrics`, { headers: auditor });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(await res.text());
  }
  const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
    samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

  it('needs a token like every other read', async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
  });

  it('counts a refused command under its rule, and executions and approvals from the read model', async () => {
    const before = await scrape();
    expect(value(before, 'nomos_commands_refused_total', { rule: 'invalid_step_transition' })).toBeUndefined();

    const created = await server.request('POST', '/sessions', undefined, operator);
    const id = created.body.session_id as string;
    const command = (body: unknown) => server.request('POST', `/sessions/${id}/commands`, body, operator);
    expect((await command({ type: 'propose_plan', steps: [{ title: 'inspect' }, { title: 'fix' }] })).status).toBe(200);
    // Done before it ever ran: refused by the domain.
    const refused = await command({ type: 'update_plan_step', seq: 1, status: 'done' });
    expect(refused.status).toBe(409);
    expect(refused.body.rule).toBe('invalid_step_transition');
    // A bad request is not a refusal.
    expect((await command({ type: 'update_plan_step', seq: 'one', status: 'done' })).status).toBe(400);

    const registered = await server.request('POST', '/entities', {
      entities: [
        { slug: 'host:peer', type: 'host', ssh: { host: '127.0.0.1', port: 22, user: 'root' } },
        { slug: 'lxc:box', type: 'lxc', parent: 'host:peer', pve_id: 132 },
      ],
    }, operator);
    expect(registered.status, JSON.stringify(registered.body)).toBe(200);
    // A config mutation waits for an operator: nothing connects anywhere.
    const queued = await command({ type: 'run', target: 'lxc:box', command: 'chown :0 /srv/data' });
    expect(queued.status, JSON.stringify(queued.body)).toBe(200);
    expect(queued.body.status).toBe('approval_required');
    // Read-your-writes up to the head, so the executions projection has the rows the gauges count.
    const head = (await server.request('GET', '/healthz', undefined, auditor)).body.head_position as number;
    const seen = await server.request('GET', `/approvals?status=pending&min_position=${head}`, undefined, auditor);
    expect(seen.body.approvals).toHaveLength(1);

    const after = await scrape();
    expect(value(after, 'nomos_commands_refused_total', { rule: 'invalid_step_transition' })).toBe(1);
    expect(after.filter((s) => s.name === 'nomos_commands_refused_total')).toHaveLength(1);
    expect(value(after, 'nomos_approvals_pending')).toBe(1);
    expect(value(after, 'nomos_executions', { status: 'awaiting_approval' })).toBe(1);
    expect(value(after, 'nomos_executions', { status: 'running' })).toBe(0);
    expect(value(after, 'nomos_events_appended_total')).toBeGreaterThan(value(before, 'nomos_events_appended_total') ?? Infinity);
  });

  it('has a position and a lag line for every projection', async () => {
    const samples = await scrape();
    for (const projection of server.runtime.projections) {
      expect(value(samples, 'nomos_projection_position', { projection: projection.name }), projection.name).toBeGreaterThanOrEqual(0);
      expect(value(samples, 'nomos_projection_lag', { projection: projection.name }), projection.name).toBeGreaterThanOrEqual(0);
    }
  });

  it("shows how late this process's event loop ran since the previous scrape, and its garbage collections", async () => {
    await scrape();
    // The histogram starts again at a scrape and counts from its next tick (every 10 ms): let it tick first.
    await new Promise((resolve) => setTimeout(resolve, 30));
    // The server runs in this process: holding its event loop for 80 ms shows in the next scrape, and only there.
    const until = performance.now() + 80;
    while (performance.now() < until) {
      // busy: no timer may fire
    }
    // Garbage for the collector: a minor collection is due long before this is allocated.
    let junk: object[] = [];
    for (let i = 0; i < 300_000; i++) junk.push({ i, text: `item ${i}` });
    junk = [];
    await new Promise((resolve) => setTimeout(resolve, 50));
    const held = await scrape();
    expect(value(held, 'nomos_event_loop_delay_max_seconds')).toBeGreaterThanOrEqual(0.05);
    expect(value(held, 'nomos_event_loop_delay_p99_seconds')).toBeGreaterThan(0);
    expect(value(held, 'nomos_event_loop_delay_p50_seconds')).toBeLessThanOrEqual(value(held, 'nomos_event_loop_delay_max_seconds')!);
    expect(value(held, 'nomos_gc_pauses_total', { kind: 'minor' })).toBeGreaterThan(0);
    expect(value(held, 'nomos_gc_pause_seconds_total', { kind: 'minor' })).toBeGreaterThan(0);
    const next = await scrape();
    // The histogram starts again at each scrape; the collections are counted from the start.
    expect(value(next, 'nomos_event_loop_delay_max_seconds')).toBeLessThan(value(held, 'nomos_event_loop_delay_max_seconds')!);
    for (const kind of ['minor', 'major', 'incremental', 'weakcb']) {
      expect(value(next, 'nomos_gc_pauses_total', { kind }), kind).toBeGreaterThanOrEqual(value(held, 'nomos_gc_pauses_total', { kind })!);
    }
    expect(junk).toHaveLength(0);
  });

  it('counts live batches committed in one round trip (PostgreSQL) and the tries that went two', async () => {
    const before = await scrape();
    const { session_id: id } = (await (await fetch(`${server.url}/sessions`, { method: 'POST', headers: { ...operator, 'x-nomos-client': 'test' } })).json()) as { session_id: string };
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${server.url}/sessions/${id}/commands`, {
        method: 'POST',
        headers: { ...operator, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'post_user_message', text: `message ${i}` }),
      });
      expect(res.status).toBe(200);
    }
    const after = await scrape();
    const committed = (samples: Sample[]) => value(samples, 'nomos_projector_batches_one_round_trip_total')!;
    const missed = (samples: Sample[]) => value(samples, 'nomos_projector_guesses_missed_total')!;
    expect(missed(after)).toBeGreaterThanOrEqual(missed(before));
    // Each answer waited for the read models: on PostgreSQL most of those batches went in one round trip (the
    // first of a session may need a read its cache does not hold); on the embedded database none is tried.
    if (database.name === 'postgres') expect(committed(after) - committed(before)).toBeGreaterThanOrEqual(3);
    else expect([committed(after), missed(after)]).toEqual([0, 0]);
  });

  it('announces every family with HELP and TYPE', async () => {
    const text = await (await fetch(`${server.url}/metrics`, { headers: auditor })).text();
    for (const [name, type] of [
      ['nomos_events_appended_total', 'counter'],
      ['nomos_commands_refused_total', 'counter'],
      ['nomos_executions', 'gauge'],
      ['nomos_approvals_pending', 'gauge'],
      ['nomos_projection_position', 'gauge'],
      ['nomos_projection_lag', 'gauge'],
      ['nomos_event_loop_delay_p99_seconds', 'gauge'],
      ['nomos_gc_pauses_total', 'counter'],
      ['nomos_gc_pause_seconds_total', 'counter'],
      ['nomos_projector_batches_one_round_trip_total', 'counter'],
      ['nomos_projector_guesses_missed_total', 'counter'],
    ]) {
      expect(text).toContain(`# HELP ${name} `);
      expect(text).toContain(`# TYPE ${name} ${type}\n`);
    }
  });
});
