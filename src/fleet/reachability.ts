// The reachability check: on the one server holding its lease, every NOMOS_REACHABILITY_EVERY, each active host
// of the inventory is probed (an SSH handshake, nothing run) and the outcome recorded in host_reachability,
// where the entities read model's queries join it into each host's health. Checks are not events: they say
// how a host answered, not what anyone did, and a fleet probed every few minutes would fill the log.
import type { Queryable } from '../ports/db.ts';
import type { HostProbe } from '../ports/host-probe.ts';
import { hostsToCheck } from '../projections/entities.ts';

export interface ReachabilitySettings {
  /** How long one probe may take. */
  readonly timeoutMs: number;
  /** Probes under way at once. */
  readonly concurrency: number;
}

export interface CheckOutcome {
  readonly slug: string;
  readonly reachable: boolean;
  readonly error: string | null;
}

/** One round: probes every host to check and records each outcome; returns them, by slug. */
export async function checkReachability(db: Queryable, probe: HostProbe, settings: ReachabilitySettings, clock: () => Date = () => new Date()): Promise<CheckOutcome[]> {
  const hosts = await hostsToCheck(db);
  const outcomes: CheckOutcome[] = [];
  let next = 0;
  const worker = async () => {
    while (next < hosts.length) {
      const host = hosts[next++]!;
      let error: string | null = null;
      try {
        await probe.reach({ slug: host.slug, address: host.address, port: host.port, user: host.user, hostKey: host.host_key }, settings.timeoutMs);
      } catch (failure) {
        error = (failure instanceof Error ? failure.message : String(failure)).slice(0, 2000);
      }
      const outcome = { slug: host.slug, reachable: error === null, error };
      await recordCheck(db, outcome, clock());
      outcomes.push(outcome);
    }
  };
  await Promise.all(Array.from({ length: Math.min(settings.concurrency, hosts.length) }, worker));
  return outcomes.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
}

/** Records one check: the latest outcome, and the latest success and failure apart. */
async function recordCheck(db: Queryable, outcome: CheckOutcome, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO host_reachability AS h (slug, checked_at, reachable, error, last_ok_at, last_failed_at, last_failed_error)
     VALUES ($1, $2, $3, $4, CASE WHEN $3 THEN $2::timestamptz END, CASE WHEN $3 THEN NULL ELSE $2::timestamptz END, $4)
     ON CONFLICT (slug) DO UPDATE SET
       checked_at = EXCLUDED.checked_at,
       reachable = EXCLUDED.reachable,
       error = EXCLUDED.error,
       last_ok_at = COALESCE(EXCLUDED.last_ok_at, h.last_ok_at),
       last_failed_at = COALESCE(EXCLUDED.last_failed_at, h.last_failed_at),
       last_failed_error = CASE WHEN EXCLUDED.reachable THEN h.last_failed_error ELSE EXCLUDED.last_failed_error END`,
    [outcome.slug, at.toISOString(), outcome.reachable, outcome.error],
  );
}
