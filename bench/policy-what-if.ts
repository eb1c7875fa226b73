// Issue 34 point 3: the policy what-if replays every command ever requested; the target is ≥ 100 000 past commands
// in ≤ 5 s. Here sessions that run commands (a few thousand distinct ones across a dozen targets, read, mutating
// and destructive; approved, denied, expired, failed, timed out) are played through the real session decider and
// appended to a fresh database, with two policy changes mid-history, and every projection is rebuilt. Then POST
// /policy/what-if is timed as a client gets it from `nomos serve` (first with the judgements' cache empty, so
// every distinct command is judged, then warm), and whatIf() alone in this process the same two ways. Used by
// bench/run.ts; alone: `node --import tsx bench/policy-what-if.ts [--scale small] [--keep]` (DATABASE_URL as for the bench).
import { createHash, randomUUID } from 'node:crypto';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ClassifierPool } from '../src/adapters/classifier-pool.ts';
import { SqlEventStore } from '../src/adapters/eventstore/sql.ts';
import type { CommandDeps } from '../src/commands/context.ts';
import { applyPolicy } from '../src/commands/policy.ts';
import { type WhatIfResult, whatIf } from '../src/commands/policy-what-if.ts';
import { type Actor, type CommandMetadata, eventMetadata } from '../src/domain/messages.ts';
import { type Policy, loadPolicy } from '../src/domain/policy/index.ts';
import { RULES_VERSION, classify, isKnownLong, normaliseCommand } from '../src/domain/risk/index.ts';
import type { ExecutionOutcome } from '../src/domain/session/commands.ts';
import { type SessionCommandInput, decide } from '../src/domain/session/decide.ts';
import { SESSION_EVENT_VERSION } from '../src/domain/session/events.ts';
import { type SessionState, evolve, initialSessionState } from '../src/domain/session/state.ts';
import { sessionStream } from '../src/domain/session/stream.ts';
import type { NewEvent } from '../src/ports/event-store.ts';
import { rebuildProjections } from '../src/projections/projector.ts';
import { projections } from '../src/runtime.ts';
import { createBenchDatabase, serverVersion } from './database.ts';
import { percentile } from './latency.ts';
import { Rng } from './prng.ts';
import { startServer } from './server.ts';
import { ms, n, type Row, renderTable, s } from './table.ts';

export interface WhatIfScale {
  /** Executions requested over the history. */
  readonly executions: number;
  /** Distinct command texts they are drawn from. */
  readonly commands: number;
  /** Warm what-ifs timed each way, after the cold one. */
  readonly runs: number;
}

export const WHAT_IF_SCALES: Record<string, WhatIfScale> = {
  full: { executions: 100_000, commands: 3_000, runs: 5 },
  small: { executions: 2_000, commands: 200, runs: 2 },
};

const TARGET_MS = 5_000;
const SEED = 20_261_207;
const DAY = 86_400_000;
const HISTORY_DAYS = 90;
const WRITERS = 8;
/** Sessions generated before they are appended (and dropped): the history is never held whole. */
const SLICE = 400;

export const WHAT_IF_METHOD = [
  'sessions of 5–40 `run` calls each, played through the session decider (verdicts from the classifier), drawn from the distinct commands with a skew (a few run very often) across 12 targets,',
  'approvals granted, denied or expired, runs failing or timing out, two policy versions applied at 40 % and 75 % of the history, appended to a fresh PostgreSQL database and every projection rebuilt, `VACUUM ANALYZE`;',
  'a candidate of 7 rules (allow restarts and ownership fixes on containers, deny reboots, ask before reading files on hosts, …) is posted to a spawned `nomos serve` (fetch, body read and parsed), first with command_judgements emptied (cold: every distinct command judged), then warm;',
  'then whatIf() alone in the bench process (its own ClassifierPool) the same two ways',
].join(' ');

const log = (message: string) => console.error(`bench: ${message}`);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

// ---- the history ----

const TARGETS = ['host:strong', 'host:weak', 'lxc:rclone', 'lxc:jellyfin', 'lxc:pihole', 'lxc:nextcloud', 'lxc:proxy', 'lxc:media', 'lxc:db', 'lxc:git', 'vm:zimaos', 'vm:ha'];
const UNITS = ['rclone-backup', 'rclone-backup.timer', 'jellyfin', 'pihole-FTL', 'nginx', 'nextcloud-cron.timer', 'zfs-scrub@tank.timer', 'docker', 'ssh', 'smbd', 'cron', 'postgresql', 'redis-server', 'php8.2-fpm', 'caddy', 'unbound'];
const PATHS = ['/mnt/media', '/mnt/media/incoming', '/srv/data', '/var/lib/jellyfin', '/etc/nginx', '/var/log', '/tank/backups', '/var/cache/jellyfin/transcodes', '/srv/nextcloud/data', '/home/media', '/opt/stacks'];
const LOGS = ['syslog', 'nginx/error.log', 'jellyfin/log.txt', 'rclone.log', 'pihole.log', 'auth.log'];

type Draw = (rng: Rng) => string;
const READS: Draw[] = [
  (r) => `systemctl status ${r.pick(UNITS)} --no-pager`,
  (r) => `journalctl -u ${r.pick(UNITS)} --since "${r.int(1, 48)} hours ago" --no-pager`,
  (r) => `df -h ${r.pick(PATHS)}`,
  (r) => `ls -la ${r.pick(PATHS)}`,
  (r) => `du -sh ${r.pick(PATHS)}`,
  (r) => `tail -n ${r.int(20, 500)} /var/log/${r.pick(LOGS)}`,
  (r) => `grep -c ERROR /var/log/${r.pick(LOGS)}`,
  (r) => `sudo cat /etc/${r.pick(['fstab', 'hosts', 'resolv.conf', 'exports'])}`,
  (r) => `ps aux | grep ${r.pick(UNITS)}`,
  (r) => `zfs list -o name,used,avail tank/${r.pick(['media', 'backups', 'vm', 'ct'])}`,
  (r) => `pct exec ${r.int(100, 140)} -- systemctl is-active ${r.pick(UNITS)}`,
];
const MUTATIONS: Draw[] = [
  (r) => `systemctl restart ${r.pick(UNITS)}`,
  (r) => `sudo systemctl reload ${r.pick(UNITS)}`,
  (r) => `chown -R ${r.int(1000, 1010)}:${r.int(1000, 1010)} ${r.pick(PATHS)}`,
  (r) => `chmod 775 ${r.pick(PATHS)}`,
  (r) => `pct set ${r.int(100, 140)} --memory ${r.pick([1024, 2048, 4096, 8192])}`,
  (r) => `docker restart ${r.pick(['jellyfin', 'nextcloud', 'caddy', 'pihole'])}`,
  (r) => `sudo sh -c 'systemctl restart ${r.pick(UNITS)} && systemctl status ${r.pick(UNITS)} --no-pager'`,
  () => `reboot`,
];
const DESTRUCTIVE: Draw[] = [
  (r) => `rm -rf ${r.pick(PATHS)}/cache-${r.int(1, 40)}`,
  (r) => `zfs destroy tank/backups@auto-${r.int(1, 400)}`,
  (r) => `truncate -s 0 /var/log/${r.pick(LOGS)}`,
];

/** `count` distinct commands: about 60 % reads, 30 % mutations, 10 % destructive. */
function distinctCommands(rng: Rng, count: number): string[] {
  const found = new Set<string>();
  for (let tries = 0; found.size < count && tries < count * 50; tries++) {
    const u = rng.next();
    found.add(rng.pick(u < 0.6 ? READS : u < 0.9 ? MUTATIONS : DESTRUCTIVE)(rng));
  }
  return [...found];
}

/** A skewed draw from [0, size): the first few indices come up far more often than the rest. */
const skewed = (rng: Rng, size: number): number => Math.min(size - 1, Math.floor(rng.next() ** 2.5 * size));

const OPERATORS: readonly Actor[] = [{ role: 'operator', id: 'alice' }, { role: 'operator', id: 'bob' }];
const AGENT: Actor = { role: 'agent', id: 'nomos' };
const EXECUTOR: Actor = { role: 'system', id: 'executor' };
const APPROVAL_TTL_MS = 15 * 60_000;

/** One session played through the decider, command by command, as the command layer would append it. */
class Play {
  readonly id: string;
  readonly events: NewEvent[] = [];
  executions = 0;
  private state: SessionState = initialSessionState;

  constructor(
    private readonly rng: Rng,
    private clock: number,
    private readonly operator: Actor,
  ) {
    this.id = rng.uuid();
  }

  private command(command: SessionCommandInput, actor: Actor, advanceMs: number): ReturnType<typeof decide> {
    this.clock += advanceMs;
    const commandId = this.rng.uuid();
    const meta: CommandMetadata = { commandId, actor, ...(actor === AGENT && { actsForOwner: true }), correlationId: commandId, causationId: commandId, now: new Date(this.clock).toISOString() };
    const events = decide(command, this.state, meta);
    this.state = events.reduce(evolve, this.state);
    const metadata = eventMetadata(meta, SESSION_EVENT_VERSION);
    for (const e of events) this.events.push({ type: e.type, data: e.data, metadata });
    return events;
  }

  start(): void {
    this.command({ type: 'start_session', session_id: this.id }, this.operator, 0);
  }

  run(target: string, command: string, judged: Judged): void {
    const execution_id = this.rng.uuid();
    this.executions++;
    const requested = this.command(
      {
        type: 'request_execution', execution_id, target, command, verdict: judged.verdict, rules_version: String(RULES_VERSION), command_hash: judged.hash(target),
        binding: sha256(`${execution_id}:${command}`), known_long: judged.knownLong, approval_ttl_ms: APPROVAL_TTL_MS,
      },
      AGENT,
      this.rng.int(5_000, 120_000),
    );
    if (requested.some((e) => e.type === 'ExecutionRefused')) return;
    const asked = requested.find((e) => e.type === 'ApprovalRequested');
    if (asked?.type === 'ApprovalRequested') {
      const approval_id = asked.data.approval_id;
      // None is left pending: the server's sweep would expire it while the what-ifs are timed, and the answers
      // compared would differ by it.
      const answer = this.rng.weighted({ granted: 82, denied: 10, expired: 8 });
      if (answer === 'denied') return void this.command({ type: 'deny', approval_id, reason: 'not now' }, this.operator, this.rng.int(30_000, 600_000));
      if (answer === 'expired') return void this.command({ type: 'expire_approval', approval_id }, EXECUTOR, APPROVAL_TTL_MS + 1_000);
      this.command({ type: 'approve', approval_id }, this.operator, this.rng.int(10_000, 300_000));
    }
    this.command({ type: 'start_execution', execution_id, binding: this.state.executions.get(execution_id)?.binding ?? '' }, EXECUTOR, 50);
    this.command({ type: 'finish_execution', execution_id, outcome: this.outcome() }, EXECUTOR, 1_000);
  }

  private outcome(): ExecutionOutcome {
    const duration_ms = this.rng.int(40, 20_000);
    switch (this.rng.weighted({ succeeded: 88, failed: 10, timed_out: 2 })) {
      case 'succeeded':
        return { kind: 'succeeded', stdout_tail: 'ok\n'.repeat(this.rng.int(1, 40)), stderr_tail: '', duration_ms };
      case 'failed':
        return { kind: 'failed', exit_code: this.rng.int(1, 4), signal: null, error: null, stdout_tail: '', stderr_tail: 'Job failed. See journalctl -xe.\n', duration_ms };
      case 'timed_out':
        return { kind: 'timed_out', limit_ms: 1_800_000, stdout_tail: '', stderr_tail: '', duration_ms: 1_800_000 };
    }
  }
}

interface Judged {
  readonly verdict: ReturnType<typeof classify>;
  readonly knownLong: boolean;
  hash(target: string): string;
}

const rule = (id: string, match: unknown[], decision: string, targets?: string[]) => ({ id, match, decision, justification: 'bench', ...(targets && { targets }) });
const policyOf = (rules: unknown[]): Policy => {
  const loaded = loadPolicy({ rules });
  if (!loaded.ok) throw new Error(`bench policy refused: ${JSON.stringify(loaded.problems)}`);
  return loaded.policy;
};
/** The versions applied mid-history, and the candidate tried against all of it. */
const VERSION_1 = [rule('rclone-restart', ['systemctl', 'restart', 'rclone-backup'], 'allow', ['lxc:rclone'])];
const VERSION_2 = [...VERSION_1, rule('no-reboot', ['reboot'], 'deny')];
export const WHAT_IF_CANDIDATE = [
  rule('restarts-in-containers', ['systemctl', ['restart', 'reload']], 'allow', ['lxc:*']),
  rule('ownership-fixes', [['chown', 'chmod']], 'allow', ['lxc:*']),
  rule('container-memory', ['pct', 'set'], 'allow', ['host:*']),
  rule('docker-restart', ['docker', 'restart'], 'allow'),
  rule('no-reboot', ['reboot'], 'deny'),
  rule('snapshots-asked', ['zfs', 'destroy'], 'ask'),
  rule('host-files-asked', ['cat'], 'ask', ['host:*']),
];

interface Loaded {
  readonly sessions: number;
  readonly executions: number;
  readonly events: number;
  readonly commands: number;
  readonly versions: number;
}

async function loadHistory(store: SqlEventStore, deps: CommandDeps, scale: WhatIfScale, clock: { now: number }): Promise<Loaded> {
  const rng = new Rng(SEED);
  const commands = distinctCommands(rng, scale.commands);
  const judged = new Map<string, Judged>();
  const judge = (command: string): Judged => {
    let found = judged.get(command);
    if (found === undefined) {
      const normalised = normaliseCommand(command);
      judged.set(command, (found = { verdict: classify(command), knownLong: isKnownLong(command), hash: (target) => sha256(`${target}\n${normalised}`) }));
    }
    return found;
  };
  // Each command has a home target it mostly runs on.
  const home = commands.map(() => rng.pick(TARGETS));
  const end = Date.now() - DAY;
  const perSession = 22; // the mean of 5–40
  const sessionCount = Math.ceil(scale.executions / perSession);
  const spacing = (HISTORY_DAYS * DAY) / sessionCount;
  const changes = [
    { at: Math.floor(scale.executions * 0.4), rules: VERSION_1 },
    { at: Math.floor(scale.executions * 0.75), rules: VERSION_2 },
  ];
  let executions = 0;
  let events = 0;
  let sessions = 0;
  let queue: Play[] = [];
  const flush = async () => {
    const batch = queue;
    queue = [];
    const writer = async () => {
      for (let play = batch.shift(); play !== undefined; play = batch.shift()) await store.append(sessionStream(play.id), play.events, { expectedVersion: 'no_stream' });
    };
    await Promise.all(Array.from({ length: WRITERS }, writer));
  };
  while (executions < scale.executions) {
    const startsAt = end - HISTORY_DAYS * DAY + Math.floor(sessions * spacing);
    const play = new Play(rng, startsAt, rng.pick(OPERATORS));
    play.start();
    const runs = Math.min(rng.int(5, 40), scale.executions - executions);
    for (let i = 0; i < runs; i++) {
      const index = skewed(rng, commands.length);
      const command = commands[index]!;
      play.run(rng.chance(0.7) ? home[index]! : rng.pick(TARGETS), command, judge(command));
    }
    executions += play.executions;
    events += play.events.length;
    sessions++;
    queue.push(play);
    const change = changes[0];
    if (change !== undefined && executions >= change.at) {
      // Every session before it is in the log before the change.
      await flush();
      clock.now = startsAt;
      await applyPolicy(deps, { rules: change.rules }, null, { actor: OPERATORS[0]! });
      changes.shift();
    }
    if (queue.length >= SLICE) await flush();
  }
  await flush();
  return { sessions, executions, events, commands: commands.length, versions: 2 };
}

// ---- the measurements ----

export interface WhatIfRun {
  readonly postgresVersion: string;
  readonly loaded: Loaded;
  readonly loadSeconds: number;
  readonly answer: WhatIfResult;
  readonly http: { readonly cold: number; readonly warm: readonly number[] };
  readonly alone: { readonly cold: number; readonly warm: readonly number[] };
  /** The served answer and the one computed here agree (counts and every listed execution). */
  readonly agree: boolean;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const began = performance.now();
  const value = await work();
  return { value, ms: performance.now() - began };
}

async function postWhatIf(base: string): Promise<WhatIfResult> {
  const response = await fetch(`${base}/policy/what-if`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ policy: { rules: WHAT_IF_CANDIDATE } }) });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST /policy/what-if: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as WhatIfResult;
}

/** What two answers must share: the counts and every execution listed, in order. */
const essence = (r: WhatIfResult) =>
  JSON.stringify({
    replayed: r.replayed, from: r.from, to: r.to, changes: r.changes, flag_counts: r.flag_counts,
    listed: [...Object.values(r.samples), ...Object.values(r.flags)].map((list) => list.map((x) => `${x.execution_id}:${x.decision_then}:${x.outcome}`)),
  });

/** `keep`: the loaded database stays, to profile against (drop it by hand afterwards). */
export async function measureWhatIf(serverUrl: string, scale: WhatIfScale, port: number, keep = false): Promise<WhatIfRun> {
  const bench = await createBenchDatabase(serverUrl, 8);
  const store = new SqlEventStore(bench.db);
  const clock = { now: Date.now() };
  const deps: CommandDeps = { store, readDb: bench.db, clock: () => new Date(clock.now), newId: randomUUID };
  try {
    log(`policy what-if: ${n(scale.executions)} executions of ${n(scale.commands)} distinct commands, played and appended`);
    const loadStarted = performance.now();
    const loaded = await loadHistory(store, deps, scale, clock);
    log(`policy what-if: ${n(loaded.events)} events appended; rebuilding every projection`);
    await rebuildProjections({ store, db: bench.db }, projections);
    await bench.db.exec('VACUUM ANALYZE');
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const { rows } = await bench.db.query<{ n: number }>('SELECT count(*)::int AS n FROM executions');
    if (rows[0]?.n !== loaded.executions) throw new Error(`the executions read model holds ${rows[0]?.n} rows, not the ${loaded.executions} requested`);

    const emptyCache = () => bench.db.exec('TRUNCATE command_judgements');
    log('policy what-if: POST /policy/what-if to nomos serve, cold then warm');
    const server = await startServer(bench.url, port);
    let served: WhatIfResult;
    const http = { cold: 0, warm: [] as number[] };
    try {
      await emptyCache();
      const cold = await timed(() => postWhatIf(server.base));
      http.cold = cold.ms;
      served = cold.value;
      for (let i = 0; i < scale.runs; i++) http.warm.push((await timed(() => postWhatIf(server.base))).ms);
    } finally {
      await server.stop();
    }

    log('policy what-if: whatIf() alone in this process, cold then warm');
    const pool = new ClassifierPool({ timeoutMs: 2_000 });
    const candidate = policyOf(WHAT_IF_CANDIDATE);
    const alone = { cold: 0, warm: [] as number[] };
    let computed: WhatIfResult;
    try {
      await emptyCache();
      const cold = await timed(() => whatIf(deps, pool, candidate));
      alone.cold = cold.ms;
      computed = cold.value;
      for (let i = 0; i < scale.runs; i++) alone.warm.push((await timed(() => whatIf(deps, pool, candidate))).ms);
    } finally {
      await pool.close();
    }
    return { postgresVersion: await serverVersion(bench.db), loaded, loadSeconds, answer: computed, http, alone, agree: essence(served) === essence(computed) };
  } finally {
    await store.close();
    if (keep) {
      await bench.db.close();
      log(`kept database ${bench.url}`);
    } else await bench.drop();
  }
}

/** The table's rows: the answer, then the what-if as a client gets it and alone, warm and cold. */
export function whatIfRows(run: WhatIfRun): Row[] {
  const { loaded, answer } = run;
  const history = `${n(loaded.executions)} executions (${n(loaded.commands)} distinct commands, ${n(loaded.sessions)} sessions, ${loaded.versions} policy versions)`;
  const median = (samples: readonly number[]) => percentile(samples, 50);
  const spread = (samples: readonly number[]) => `median ${ms(median(samples))} of ${samples.length} (${ms(Math.min(...samples))}–${ms(Math.max(...samples))})`;
  const c = answer.changes;
  return [
    {
      metric: `policy what-if over ${history}: POST /policy/what-if as a client gets it, judgements kept (warm)`,
      figure: `${spread(run.http.warm)}; replayed ${n(answer.replayed)}: unchanged ${n(c.unchanged)}, newly allowed ${n(c.newly_allowed)} (of them once denied ${n(answer.flag_counts.allowed_once_denied)}, once failed ${n(answer.flag_counts.allowed_once_failed)}), newly asked ${n(c.newly_asked)}, newly denied ${n(c.newly_denied)}${run.agree ? '' : '; the served answer and the one computed alone DIFFER!'}`,
      target: `≤ ${n(TARGET_MS)} ms`,
      met: median(run.http.warm) <= TARGET_MS && run.agree,
    },
    {
      metric: `policy what-if, the same, first after command_judgements was emptied (cold: ${n(answer.commands)} commands judged)`,
      figure: ms(run.http.cold),
      target: `≤ ${n(TARGET_MS)} ms`,
      met: run.http.cold <= TARGET_MS,
    },
    { metric: 'policy what-if: whatIf() alone in the bench process, warm; cold', figure: `${spread(run.alone.warm)}; cold ${ms(run.alone.cold)}`, target: null },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { scale: { type: 'string', default: 'full' }, port: { type: 'string', default: '18094' }, keep: { type: 'boolean', default: false } } });
  const scale = WHAT_IF_SCALES[values.scale];
  if (!scale) throw new Error(`unknown scale ${values.scale}; one of ${Object.keys(WHAT_IF_SCALES).join(', ')}`);
  const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const began = performance.now();
  const run = await measureWhatIf(serverUrl, scale, Number(values.port), values.keep);
  const header = [
    `# Policy what-if — ${values.scale} scale`,
    '',
    `- date: ${new Date().toISOString()}; run took ${s((performance.now() - began) / 1000)} (the history loaded in ${s(run.loadSeconds)}: ${n(run.loaded.events)} events)`,
    `- machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${n(totalmem() / 1_073_741_824)} GiB RAM, Node ${process.version}, PostgreSQL ${run.postgresVersion}`,
    `- method: ${WHAT_IF_METHOD}`,
  ];
  console.log(renderTable(header, whatIfRows(run), { judged: values.scale === 'full' }));
}
