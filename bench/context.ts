// Issue 33: what the context builder costs beside the model call it precedes. Before every model call the agent
// reads its session's events back from the store and fits them to the token budget (src/agent/context-fit.ts);
// here that is timed on a session of 150 `run` calls (bench/context-session.ts) for an 8 k, a 32 k and a 128 k
// window, warm (in this process) and cold (a fresh process of its own, bench/context-cold.ts), beside a model call
// through the real OpenAI adapter to a local server that answers at once (bench/fake-provider.ts): the floor of
// a call, which a real provider's inference only lengthens. Used by bench/run.ts; alone:
// `node --import tsx bench/context.ts [--scale small]` (DATABASE_URL as for the bench).
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fitModelMessages } from '../src/agent/context-fit.ts';
import { toolDefinitions } from '../src/agent/tools.ts';
import { contextWindow } from '../src/agent/window.ts';
import { OpenAiLlm } from '../src/adapters/llm/openai.ts';
import { SqlEventStore } from '../src/adapters/eventstore/sql.ts';
import { migrate } from '../src/adapters/db/migrate.ts';
import { openDb } from '../src/adapters/db/open.ts';
import type { SessionEvent } from '../src/domain/session/events.ts';
import type { EventStore } from '../src/ports/event-store.ts';
import type { ColdCall } from './context-cold.ts';
import { TOOL_CALLS, TURNS, appendSession, contextSession, readSession, systemMessage } from './context-session.ts';
import { createBenchDatabase, serverVersion } from './database.ts';
import { startFakeProvider } from './fake-provider.ts';
import { percentile } from './latency.ts';
import { ms, n, type Row, renderTable } from './table.ts';

export interface ContextScale {
  /** Model calls' contexts built (read and fit) per window, after one untimed. */
  readonly builds: number;
  /** Model calls timed per window, after one untimed. */
  readonly modelCalls: number;
}

export const CONTEXT_SCALES: Record<string, ContextScale> = {
  full: { builds: 50, modelCalls: 20 },
  small: { builds: 5, modelCalls: 3 },
};

/** The windows measured: a small local model's, the default, a large hosted model's. */
const WINDOWS = [8_000, 32_000, 128_000];
/** The warm fit's target at 150 tool calls (issue 33). */
const FIT_TARGET_MS = 50;

interface Spread {
  readonly p50: number;
  readonly p99: number;
}

export interface WindowRun {
  readonly windowTokens: number;
  readonly budgetTokens: number;
  readonly read: Spread;
  readonly fit: Spread;
  /** The first read and fit of a fresh process. */
  readonly cold: ColdCall;
  readonly estimatedTokens: number;
  readonly elidedResults: number;
  readonly foldedTurns: number;
  readonly fits: boolean;
  /** The fitted messages and the tools as JSON, in bytes: about what the request carries. */
  readonly requestBytes: number;
  readonly call: Spread;
}

export interface ContextRun {
  readonly postgresVersion: string;
  readonly events: number;
  /** The session's payloads as JSON, in bytes. */
  readonly bytes: number;
  readonly builds: number;
  readonly modelCalls: number;
  /** The same read on the embedded default. */
  readonly embeddedRead: Spread;
  readonly windows: readonly WindowRun[];
}

/** How the rows were measured, for the table's header. */
export const CONTEXT_METHOD = [
  `a session of ${TOOL_CALLS} \`run\` calls with ~3 KiB results in ${TURNS} turns (their executions' and model calls' events too) appended to a fresh database;`,
  'before each timed model call its events are read back as the agent reads them (readStream + parseSessionEvent) and fitted (fitModelMessages) to the window less its reserve (contextWindow), one untimed first;',
  "the first read and fit of a fresh process (bench/context-cold.ts, one per window: the token-count cache empty) apart;",
  'the model call is OpenAiLlm.complete with the fitted messages and the tools, to an OpenAI-compatible server in the bench process that streams a short reply at once (bench/fake-provider.ts): the floor of a call, no inference',
].join(' ');

const log = (message: string) => console.error(`bench: ${message}`);
const spread = (samples: readonly number[]): Spread => ({ p50: percentile(samples, 50), p99: percentile(samples, 99) });

async function timed<T>(work: () => Promise<T> | T): Promise<{ value: T; ms: number }> {
  const began = performance.now();
  const value = await work();
  return { value, ms: performance.now() - began };
}

const COLD = fileURLToPath(new URL('./context-cold.ts', import.meta.url));

function coldCall(databaseUrl: string, budgetTokens: number): Promise<ColdCall> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', COLD, databaseUrl, String(budgetTokens)], { timeout: 120_000 }, (error, stdout) => {
      if (error !== null) reject(new Error(`bench/context-cold.ts failed: ${error.message}`));
      else resolve(JSON.parse(stdout) as ColdCall);
    });
  });
}

async function embeddedReads(events: readonly SessionEvent[], reads: number): Promise<Spread> {
  const dir = await mkdtemp(join(tmpdir(), 'nomos-bench-context-'));
  try {
    const db = await openDb({ databaseUrl: null, dataDir: dir });
    const store = new SqlEventStore(db);
    try {
      await migrate(db);
      await appendSession(store, events);
      await readSession(store);
      const samples: number[] = [];
      for (let i = 0; i < reads; i++) samples.push((await timed(() => readSession(store))).ms);
      return spread(samples);
    } finally {
      await store.close();
      await db.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function measureWindow(store: EventStore, databaseUrl: string, windowTokens: number, scale: ContextScale, baseURL: string): Promise<WindowRun> {
  const { budgetTokens } = contextWindow('bench', windowTokens);
  const [system, tools] = [await systemMessage(), toolDefinitions()];
  // In a process of its own: this one's count cache already holds the session's texts after the first window.
  const cold = await coldCall(databaseUrl, budgetTokens);
  const build = async () => {
    const read = await timed(() => readSession(store));
    const fit = await timed(() => fitModelMessages(system, read.value, { tokens: budgetTokens, tools }));
    return { read: read.ms, fit: fit.ms, value: fit.value };
  };
  const reads: number[] = [];
  const fits: number[] = [];
  let fit = (await build()).value;
  for (let i = 0; i < scale.builds; i++) {
    const built = await build();
    reads.push(built.read);
    fits.push(built.fit);
    fit = built.value;
  }

  const llm = new OpenAiLlm({ apiKey: 'bench', baseURL, model: 'bench-model' });
  const call = () => llm.complete({ messages: fit.messages, tools, signal: AbortSignal.timeout(60_000) }, () => undefined);
  await call();
  const calls: number[] = [];
  for (let i = 0; i < scale.modelCalls; i++) calls.push((await timed(call)).ms);
  return {
    windowTokens,
    budgetTokens,
    read: spread(reads),
    fit: spread(fits),
    cold,
    estimatedTokens: fit.estimatedTokens,
    elidedResults: fit.elidedResults,
    foldedTurns: fit.foldedTurns,
    fits: fit.fits,
    requestBytes: Buffer.byteLength(JSON.stringify({ messages: fit.messages, tools })),
    call: spread(calls),
  };
}

/** Every figure: the session appended to a fresh PostgreSQL database on `serverUrl`, and to a fresh embedded one. */
export async function measureContext(serverUrl: string, scale: ContextScale): Promise<ContextRun> {
  const events = contextSession();
  const bytes = events.reduce((sum, e) => sum + Buffer.byteLength(JSON.stringify(e.data)), 0);
  const provider = await startFakeProvider();
  const bench = await createBenchDatabase(serverUrl, 4);
  const store = new SqlEventStore(bench.db);
  try {
    log(`context builder: ${n(events.length)} events of a ${TOOL_CALLS}-call session appended, then read and fitted for each window`);
    await appendSession(store, events);
    const windows: WindowRun[] = [];
    for (const window of WINDOWS) windows.push(await measureWindow(store, bench.url, window, scale, provider.baseURL));
    log('context builder: the same read on the embedded default');
    const embeddedRead = await embeddedReads(events, scale.builds);
    return { postgresVersion: await serverVersion(bench.db), events: events.length, bytes, builds: scale.builds, modelCalls: scale.modelCalls, embeddedRead, windows };
  } finally {
    await store.close();
    await bench.drop();
    await provider.close();
  }
}

/** The table's rows: per window the builder, then the model call it precedes with the builder's share. */
export function contextRows(run: ContextRun): Row[] {
  const session = `${TOOL_CALLS} run calls (${n(run.events)} events, ${n(run.bytes / 1024)} KiB)`;
  return [
    ...run.windows.flatMap((w): Row[] => {
      const builder = w.read.p50 + w.fit.p50;
      return [
        {
          metric: `context before a model call at ${session}, window ${n(w.windowTokens)} tokens (budget ${n(w.budgetTokens)}): fit, warm p50 of ${n(run.builds)}, and the read before it (PostgreSQL)`,
          figure: `fit p50 ${ms(w.fit.p50)}, p99 ${ms(w.fit.p99)}, first call in a fresh process ${ms(w.cold.fitMs)}; read p50 ${ms(w.read.p50)}, p99 ${ms(w.read.p99)}, fresh process ${ms(w.cold.readMs)}; prompt ${n(w.estimatedTokens)} tokens${w.fits ? '' : ' (over the budget!)'}, ${n(w.elidedResults)} results elided, ${n(w.foldedTurns)} turns folded`,
          target: `fit p50 ≤ ${FIT_TARGET_MS} ms`,
          met: w.fit.p50 <= FIT_TARGET_MS,
        },
        {
          metric: `the model call it precedes, window ${n(w.windowTokens)}, at its floor (local server, no inference), p50 of ${n(run.modelCalls)}`,
          figure: `p50 ${ms(w.call.p50)}, p99 ${ms(w.call.p99)} (messages and tools ${n(w.requestBytes / 1024)} KiB); the builder (read + fit, p50s) ${ms(builder)}, ${((100 * builder) / (builder + w.call.p50)).toFixed(0)} % of builder and call`,
          target: null,
        },
      ];
    }),
    {
      metric: `read of the same ${session} on the embedded default (PGlite), p50 of ${n(run.builds)}`,
      figure: `p50 ${ms(run.embeddedRead.p50)}, p99 ${ms(run.embeddedRead.p99)}`,
      target: null,
    },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { scale: { type: 'string', default: 'full' } } });
  const scale = CONTEXT_SCALES[values.scale];
  if (!scale) throw new Error(`unknown scale ${values.scale}; one of ${Object.keys(CONTEXT_SCALES).join(', ')}`);
  const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const began = performance.now();
  const run = await measureContext(serverUrl, scale);
  const header = [
    `# Context builder — ${values.scale} scale`,
    '',
    `- date: ${new Date().toISOString()}; run took ${((performance.now() - began) / 1000).toFixed(1)} s`,
    `- machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${n(totalmem() / 1_073_741_824)} GiB RAM, Node ${process.version}, PostgreSQL ${run.postgresVersion}`,
    `- method: ${CONTEXT_METHOD}`,
  ];
  console.log(renderTable(header, contextRows(run), { judged: values.scale === 'full' }));
}
