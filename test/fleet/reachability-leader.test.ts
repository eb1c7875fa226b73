// The reachability check on two servers sharing PostgreSQL: one of them probes the fleet, not both; when it
// stops, the other takes the check over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresDb } from '../../src/adapters/db/postgres.ts';
import { registerEntities } from '../../src/commands/entity.ts';
import { loadConfig } from '../../src/config.ts';
import type { HostProbe } from '../../src/ports/host-probe.ts';
import { hostsToCheck } from '../../src/projections/entities.ts';
import { openRuntime, type Runtime } from '../../src/runtime.ts';
import { postgresDatabase, type TestDb } from '../support/databases.ts';
import { until } from '../support/until.ts';

/** A probe that says every host answered, and counts its calls. */
function countingProbe(): HostProbe & { calls: number } {
  const probe = { kind: 'tcp' as const, calls: 0, reach: () => {
    probe.calls++;
    return Promise.resolve();
  } };
  return probe;
}

describe.runIf(postgresDatabase !== null)('the reachability check across servers (needs DATABASE_URL: PGlite is one process)', () => {
  let testDb: TestDb;
  let first: Runtime;
  let second: Runtime;
  const closed = new Set<Runtime>();

  beforeAll(async () => {
    testDb = await postgresDatabase!.open();
    first = await openRuntime(loadConfig({}), { db: postgresDb(testDb.url!) });
    second = await openRuntime(loadConfig({}), { db: postgresDb(testDb.url!) });
    first.startProjectors(undefined, { leaseRetryMs: 200 });
    second.startProjectors(undefined, { leaseRetryMs: 200 });
    const ssh = (n: number) => ({ host: `10.0.0.${n}`, port: 22, user: 'root' });
    await registerEntities(first.commandDeps, [1, 2, 3].map((n) => ({ slug: `host:h${n}`, type: 'host' as const, ssh: ssh(n) })), { actor: { role: 'operator', id: 'alice' } });
    await until('the hosts projected', async () => ((await hostsToCheck(first.db)).length === 3 ? true : undefined));
  }, 60_000);

  afterAll(async () => {
    for (const runtime of [first, second]) if (runtime && !closed.has(runtime)) await runtime.close();
    await first?.db.close();
    await second?.db.close();
    await testDb?.close();
  });

  it('is run by one server, and by the other once that one stops', async () => {
    const [a, b] = [countingProbe(), countingProbe()];
    first.startReachability(100, { probe: a, onError: (error) => console.error(error) });
    second.startReachability(100, { probe: b, onError: (error) => console.error(error) });
    await until('a few rounds', () => Promise.resolve(a.calls + b.calls >= 12 ? true : undefined));
    // Each round probes the three hosts, all on the same server.
    const [leader, standby, standbyRuntime] = a.calls > 0 ? [a, b, second] : [b, a, first];
    expect(standby.calls).toBe(0);
    expect(leader.calls).toBeGreaterThanOrEqual(12);
    const { rows } = await first.db.query<{ n: number }>('SELECT count(*)::int AS n FROM host_reachability WHERE reachable');
    expect(Number(rows[0]?.n)).toBe(3);

    const leading = standbyRuntime === second ? first : second;
    closed.add(leading);
    await leading.close();
    await until('the other server taking over', () => Promise.resolve(standby.calls >= 3 ? true : undefined), 20_000);
  });
});
