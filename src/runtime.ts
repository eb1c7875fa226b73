// Wires the parts for one process: the read-model database (PostgreSQL or embedded PGlite), the event store
// (the same database, or EventStoreDB), migrations, and the projections with their projectors.
import { type KeyObject, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Db } from './ports/db.ts';
import type { CommandClassifier } from './ports/classifier.ts';
import { ClassifierPool } from './adapters/classifier-pool.ts';
import { migrate } from './adapters/db/migrate.ts';
import { openDb } from './adapters/db/open.ts';
import { SqlEventStore } from './adapters/eventstore/sql.ts';
import { Agent } from './agent/agent.ts';
import { fleetSnapshot } from './agent/fleet-snapshot.ts';
import { knowledgeTools } from './agent/knowledge-tools.ts';
import type { ToolServices } from './agent/tools.ts';
import type { LlmClient } from './ports/llm.ts';
import { AgentReactor } from './agent/reactor.ts';
import { TurnBus } from './agent/turn-bus.ts';
import { TurnLeases } from './agent/turn-lease.ts';
import { LiveExecutions } from './execution/live.ts';
import { sweep } from './execution/sweeps.ts';
import { every, LedLoop } from './leases/led-loop.ts';
import { checkReachability } from './fleet/reachability.ts';
import type { HostProbe } from './ports/host-probe.ts';
import { DEFAULT_NOTIFIER_SETTINGS, Notifier, type NotifierSettings } from './notify/notifier.ts';
import { httpReader } from './adapters/http/fetch-text.ts';
import type { CommandDeps } from './commands/context.ts';
import type { Executor } from './ports/executor.ts';
import { ExecutionService } from './execution/service.ts';
import type { Checkpoint, EventStore } from './ports/event-store.ts';
import type { CheckpointEvery, Config } from './config.ts';
import { ensureSigningKey, readSigningKey } from './log/keys.ts';
import { logOrigin, Sealer, SealRefused } from './log/sealer.ts';
import { sealState } from './log/store.ts';
import type { Projection } from './projections/projection.ts';
import { LedProjector, type LedProjectorOptions } from './projections/leadership.ts';
import { type Locate, ReadWait } from './projections/read-wait.ts';
import { sharedReads } from './projections/shared-reads.ts';
import { ensureCheckpoint, ProjectorGroup } from './projections/projector.ts';
import { entitiesProjection } from './projections/entities.ts';
import { executionsProjection } from './projections/executions.ts';
import { knowledgeProjection } from './projections/knowledge.ts';
import { modelCallsProjection } from './projections/model-calls.ts';
import { plansProjection } from './projections/plans.ts';
import { sessionsProjection } from './projections/sessions.ts';
import { transcriptProjection } from './projections/transcript.ts';
import { shipped } from './paths.ts';
import { contextWindow } from './agent/window.ts';
import type { ModelPrices } from './domain/usage/prices.ts';

/** The agent's persona and working rules, shipped with the code. */
const SYSTEM_PROMPT = shipped('prompts', 'system.md');

export const projections: readonly Projection[] = [sessionsProjection, transcriptProjection, plansProjection, entitiesProjection, executionsProjection, knowledgeProjection, modelCallsProjection];

const PGLITE_REBUILD_BATCH = 100;
// How often a read-your-writes wait looks at the checkpoints when no projector of this process has just
// committed (the one it needs runs on another server).
const READ_WAIT_POLL_MS = 5;

/** Where events stand in the log's order: in one statement on the SQL store, one lookup each elsewhere. */
function locator(store: EventStore): Locate {
  if (store instanceof SqlEventStore) return (positions) => store.checkpointsOf(positions);
  return async (positions) => {
    const found = await Promise.all(positions.map(async (position) => [position, await store.checkpointOf(position)] as const));
    return new Map(found.filter((entry): entry is readonly [number, Checkpoint] => entry[1] !== null));
  };
}

export interface Runtime {
  readonly db: Db;
  readonly store: EventStore;
  readonly projections: readonly Projection[];
  /** Waits until the read models hold a position: read-your-writes for the API's answers and reads. */
  readonly readWait: ReadWait;
  readonly commandDeps: CommandDeps;
  readonly executions: ExecutionService;
  /** The classifier (and the policies' decisions) on worker threads for long commands. */
  readonly classifier: CommandClassifier;
  readonly bus: TurnBus;
  /** The agent's tools and what they run on: the built-in agent's and the MCP server's. */
  readonly tools: ToolServices;
  /** Null when no model provider is configured: POST /chat then answers 503. */
  readonly agent: Agent | null;
  readonly description: { eventStore: string; readModels: string };
  /** Commands can reach hosts: an SSH key is configured (NOMOS_SSH_KEY), or a test gave an executor. */
  readonly executorConfigured: boolean;
  /** NOMOS_MODEL_PRICES: what the usage reads price tokens with (empty: no costs shown). */
  readonly modelPrices: ModelPrices;
  /** Runs each projector for which this process holds the lease (one server per projection at a time). */
  startProjectors(
    onError?: (projection: string, error: unknown) => void,
    options?: { leaseRetryMs?: number; onRebuild?: (projection: string, event: Parameters<NonNullable<LedProjectorOptions['onRebuild']>>[0]) => void },
  ): void;
  /** The projections this process runs right now. */
  leading(): string[];
  /**
   * Since start, this process's live batches committed in one round trip (worked out from the events it had just
   * appended) and its tries that went the two-round-trip way instead (projector.ts, applyGuessed).
   */
  guesses(): { readonly committed: number; readonly missed: number };
  /**
   * On the server holding the sweep's lease, every `everyMs` until close: approvals past their TTL expired,
   * executions of a server gone recorded lost, approved ones it never started started, sessions idle past
   * NOMOS_SESSION_IDLE_CLOSE and those of lapsed MCP sessions closed as abandoned (src/execution/sweeps.ts).
   */
  startSweeper(everyMs: number, onError?: (error: unknown) => void): void;
  /**
   * On the server holding the reachability lease, every `everyMs` until close: each active host probed, nothing
   * run, its answer recorded in its health (src/fleet/reachability.ts). The probe logs in with NOMOS_SSH_KEY, or
   * without one waits for the SSH greeting; a test may give its own.
   */
  startReachability(everyMs: number, options?: { probe?: HostProbe; timeoutMs?: number; onError?: (error: unknown) => void }): void;
  /**
   * On the server holding the notifier's lease: the operator's channels (NOMOS_NOTIFY, or `settings.channels`) told
   * of approvals asked for and about to lapse, failed turns and hung executions, through the outbox
   * (src/notify/notifier.ts). `ownUrl`: the console's address when NOMOS_PUBLIC_URL is unset. Nothing without channels.
   */
  startNotifier(ownUrl: string, settings?: Partial<NotifierSettings> & { onError?: (error: unknown) => void }): void;
  /**
   * On the server holding the seal's lease: committed events sealed into the log's Merkle tree, checkpoints signed
   * (src/log/sealer.ts). The key: `options.key`, NOMOS_SIGNING_KEY, or on the embedded default the data
   * directory's (made on first start). Resolves to what this server does about the seal, in words for its log.
   */
  startSealer(options?: { key?: KeyObject; sealMs?: number; checkpointEvery?: CheckpointEvery; onError?: (error: unknown) => void; onLead?: () => void }): Promise<string>;
  /** On the server holding the reactor's lease: the agent carries on when an execution it waited on ends. */
  startReactor(options?: { pollMs?: number; onError?: (error: unknown) => void }): void;
  close(): Promise<void>;
}

export { openDb };

/** The key this server seals with, or why it has none. */
async function signingKey(config: Config, db: Db, given: KeyObject | undefined, warn: (message: string) => void): Promise<{ key: KeyObject | null; why: string }> {
  if (given) return { key: given, why: 'the key given' };
  if (config.log.signingKeyPath) return { key: await readSigningKey(config.log.signingKeyPath, { warn }), why: `NOMOS_SIGNING_KEY=${config.log.signingKeyPath}` };
  if (db.kind === 'pglite') {
    const path = join(config.dataDir, 'signing-key.pem');
    const { key, created } = await ensureSigningKey(path, { warn });
    return { key, why: `${path}${created ? ', made now' : ''}` };
  }
  const sealed = await sealState(db);
  return {
    key: null,
    why: sealed
      ? `log: NOT SEALING: the log is sealed (origin ${sealed.origin}) and this server has no NOMOS_SIGNING_KEY; give it the key file the other servers use`
      : 'log: not sealed: set NOMOS_SIGNING_KEY to a key file (nomos keygen FILE writes one) on every server',
  };
}

/**
 * Opens everything from configuration; tests may pass a fresh db, a clock, an executor or a model client of
 * their own, or other versions of the projections (as a new release of the code would bring).
 */
export async function openRuntime(
  config: Config,
  given?: { db?: Db; clock?: () => Date; executor?: Executor; llm?: LlmClient; projections?: readonly Projection[] },
): Promise<Runtime> {
  const chosen = given?.projections ?? projections;
  const db = given?.db ?? (await openDb(config));
  await migrate(db);
  // The adapters a configuration may do without are loaded only when it names them: a server starts sooner.
  const store: EventStore = config.eventStoreUrl ? new (await import('./adapters/eventstore/esdb.ts')).EsdbEventStore(config.eventStoreUrl) : new SqlEventStore(db);
  // A projection whose version changed is rebuilt into shadow tables by the server that leads it, while its
  // live tables keep answering (see startProjectors).
  for (const projection of chosen) await ensureCheckpoint(db, projection);
  const projectors: LedProjector[] = [];
  const groups: ProjectorGroup[] = [];
  const readWait = new ReadWait(db, locator(store), chosen, {
    pollMs: READ_WAIT_POLL_MS,
    leads: (name) => projectors[chosen.findIndex((p) => p.name === name)]?.leading === true,
  });
  const commandDeps: CommandDeps = { store, readDb: db, clock: given?.clock ?? (() => new Date()), newId: randomUUID };
  const executor = given?.executor ?? (config.sshKeyPath ? new (await import('./adapters/ssh/executor.ts')).SshExecutor({ privateKey: await readFile(config.sshKeyPath) }) : null);
  // This server's name in leases and claims, as other servers' answers show it.
  const serverId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const log = (message: string, error?: unknown) => console.error(`nomos: ${message}:`, error);
  const live = new LiveExecutions(db, serverId, config.execution, log);
  // Large commands are classified on worker threads (started when first needed), within a time bound.
  const classifier = new ClassifierPool({ timeoutMs: config.classifyTimeoutMs });
  const executions = new ExecutionService(commandDeps, executor, config.execution, live, log, classifier);
  const bus = new TurnBus();
  // Servers sharing PostgreSQL pass each other's token deltas; an embedded database has one server.
  const unshare = db.kind === 'postgres' ? await bus.share(db, serverId) : null;
  const leases = new TurnLeases(db, serverId, { ttlMs: config.turnLeaseMs, renewMs: Math.max(100, Math.floor(config.turnLeaseMs / 5)) }, log);
  const llm = given?.llm ?? (config.llm ? new (await import('./adapters/llm/openai.ts')).OpenAiLlm({ apiKey: config.llm.apiKey, model: config.llm.model, ...(config.llm.baseURL && { baseURL: config.llm.baseURL }) }) : null);
  // The agent's tools, for the built-in agent and for external agents over MCP alike.
  const tools: ToolServices = { deps: commandDeps, readDb: db, readWait, executions, web: httpReader({ allow: config.httpGetAllow }), model: config.llm?.model ?? 'custom', knowledge: knowledgeTools(commandDeps, db) };
  const agent = llm
    ? new Agent(
        commandDeps,
        llm,
        tools,
        leases,
        {
          systemPrompt: await readFile(SYSTEM_PROMPT, 'utf8'),
          fleetSnapshot: () => fleetSnapshot(db),
          publishToken: (sessionId, text) => bus.publish(sessionId, text),
          tokensDelivered: () => bus.delivered(),
          log: (message, error) => console.error(`nomos agent: ${message}:`, error),
          window: contextWindow(llm.model, config.contextTokens),
        },
      )
    : null;
  const loops: LedLoop[] = [];
  /** What started loops hold open beyond their lease (the notifier's SMTP connections). */
  const closers: Array<() => Promise<void>> = [];
  const lead = (name: string, work: (signal: AbortSignal) => Promise<void>, onError?: (error: unknown) => void) => {
    const loop = new LedLoop(db, name, work, { retryMs: 2_000, ...(onError && { onError }) });
    loop.start();
    loops.push(loop);
  };
  return {
    db,
    store,
    projections: chosen,
    readWait,
    commandDeps,
    executions,
    classifier,
    bus,
    tools,
    agent,
    modelPrices: config.modelPrices,
    executorConfigured: executor !== null,
    description: {
      eventStore: config.eventStoreUrl ? 'eventstoredb' : db.kind,
      readModels: db.kind === 'pglite' ? `pglite (${config.dataDir})` : 'postgres',
    },
    startProjectors(onError, options) {
      // Projectors caught up together read the log's next page together (src/projections/shared-reads.ts).
      const projectorStore = sharedReads(store);
      // The projections this process leads apply each live batch in one transaction together.
      const group = new ProjectorGroup({ store: projectorStore, db }, { onError: (error) => onError?.('projectors', error) });
      groups.push(group);
      for (const projection of chosen) {
        const projector = new LedProjector({ store: projectorStore, db }, projection, {
          retryMs: options?.leaseRetryMs ?? 2_000,
          // On PGlite every statement shares one connection: keep the API's waits behind a rebuild batch short.
          ...(db.kind === 'pglite' && { rebuildBatchSize: PGLITE_REBUILD_BATCH }),
          onError: (error) => onError?.(projection.name, error),
          onApplied: (checkpoint) => readWait.applied(projection.name, checkpoint),
          onRebuild: (event) => options?.onRebuild?.(projection.name, event),
          group,
        });
        projector.start();
        projectors.push(projector);
      }
    },
    leading() {
      return chosen.filter((_p, i) => projectors[i]?.leading === true).map((p) => p.name);
    },
    guesses() {
      return { committed: groups.reduce((n, g) => n + g.guesses.committed, 0), missed: groups.reduce((n, g) => n + g.guesses.missed, 0) };
    },
    startSweeper(everyMs, onError) {
      const sessionEnd = { idleCloseMs: config.sessionIdleCloseMs };
      lead('sweep', (signal) => every(everyMs, signal, async () => void (await sweep(commandDeps, executions, sessionEnd)), onError), onError);
    },
    startReachability(everyMs, options) {
      if (everyMs <= 0) return;
      const timeoutMs = options?.timeoutMs ?? Math.min(10_000, Math.max(1_000, Math.floor(everyMs / 2)));
      let probe = options?.probe ?? null;
      const round = async () => {
        probe ??= (await import('./adapters/ssh/handshake.ts')).hostProbe(config.sshKeyPath ? await readFile(config.sshKeyPath) : null);
        await checkReachability(db, probe, { timeoutMs, concurrency: 8 });
      };
      const onError = options?.onError ?? ((error: unknown) => log('reachability check', error));
      lead('reachability', (signal) => every(everyMs, signal, round, onError), onError);
    },
    startNotifier(ownUrl, options) {
      const channels = options?.channels ?? config.notify.channels;
      if (channels.length === 0) return;
      const settings: NotifierSettings = { ...DEFAULT_NOTIFIER_SETTINGS, publicUrl: config.notify.publicUrl ?? ownUrl, ...options, channels };
      const onError = options?.onError ?? ((error: unknown) => log('notifier', error));
      const senders = import('./adapters/notify/senders.ts').then(({ senderFor }) => new Map(channels.map((c) => [c.name, senderFor(c)])));
      closers.push(async () => {
        for (const sender of (await senders).values()) await sender.close?.();
      });
      lead('notify', async (signal) => new Notifier(store, db, await senders, settings, log, commandDeps.clock).run(signal), onError);
    },
    async startSealer(options) {
      if (!(store instanceof SqlEventStore)) return 'log: not sealed (the events are in EventStoreDB; only the SQL event store is sealed)';
      const signing = await signingKey(config, db, options?.key, (message) => log('signing key', message));
      if (!signing.key) return signing.why;
      const key = signing.key;
      const settings = { key, origin: config.log.origin, sealMs: options?.sealMs ?? config.log.sealMs, checkpointEvery: options?.checkpointEvery ?? config.log.checkpointEvery };
      // A refusal (another key or origin) is said once, not at every retry of the lease.
      let said = '';
      const onError = (error: unknown) => {
        if (error instanceof SealRefused && error.message === said) return;
        if (error instanceof SealRefused) said = error.message;
        (options?.onError ?? ((e: unknown) => log('sealer', e)))(error);
      };
      lead('seal', (signal) => {
        options?.onLead?.();
        return new Sealer(db, settings, commandDeps.clock).run(signal);
      }, onError);
      return `log: sealing with ${signing.why} (origin ${settings.origin ?? logOrigin(key)}), every ${settings.sealMs} ms`;
    },
    startReactor(options) {
      if (!agent) return;
      const reactor = new AgentReactor(store, db, agent, { pollMs: options?.pollMs ?? 1_000, log });
      lead('reactor:agent', (signal) => reactor.run(signal), options?.onError ?? ((error) => log('agent reactor', error)));
    },
    async close() {
      await Promise.all(loops.map((l) => l.stop()));
      await Promise.all(closers.map((c) => c()));
      await readWait.close();
      await agent?.close();
      await executions.close();
      await classifier.close();
      await executor?.close();
      await unshare?.();
      await Promise.all(projectors.map((p) => p.stop()));
      await store.close();
      if (!given?.db) await db.close();
    },
  };
}
