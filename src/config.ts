// Configuration from the environment, parsed once at start; a bad value stops the start with a clear message.
import { z } from 'zod';
import { type ApiToken, parseTokens } from './api/tokens.ts';
import { parseAllowedHosts, parseAllowedOrigins } from './api/hosts.ts';
import type { ExecutionSettings } from './execution/service.ts';
import { type AllowList, parseAllowList } from './adapters/http/address.ts';
import { ModelPrices } from './domain/usage/prices.ts';
import { readFileSync } from 'node:fs';
import type { Channel } from './notify/channels.ts';
import { parseNotifyChannels } from './notify/config.ts';

const Env = z.object({
  DATABASE_URL: z.string().min(1).optional(),
  EVENTSTORE_URL: z.string().startsWith('esdb', 'EVENTSTORE_URL must be an esdb:// or esdb+discover:// URL').optional(),
  NOMOS_DATA_DIR: z.string().min(1).default('./.nomos'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8092),
  HOST: z.string().min(1).default('127.0.0.1'),
  /** How long a query with min_position waits for the projections before answering 503. */
  NOMOS_READ_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
  NOMOS_BODY_LIMIT: z.coerce.number().int().min(1024).default(1_048_576),
  /** Event streams (a session's, /changes) one token, or with auth off one address, may hold open at once. */
  NOMOS_MAX_STREAMS: z.coerce.number().int().min(1).max(100_000).default(32),
  /** role:name:token entries, comma-separated, tokens of 32+ characters; unset means auth is off and the server stays on loopback. */
  NOMOS_TOKENS: z.string().optional(),
  /** Names of this server a request's Host may carry besides loopback and HOST (behind a proxy, or a LAN name). */
  NOMOS_ALLOWED_HOSTS: z.string().optional(),
  /** Origins besides the server's own whose pages may change state. */
  NOMOS_ALLOWED_ORIGINS: z.string().optional(),
  /** PEM certificate (chain) and private key: the server speaks HTTPS. Both or neither. */
  NOMOS_TLS_CERT: z.string().min(1).optional(),
  NOMOS_TLS_KEY: z.string().min(1).optional(),
  /** Path of the SSH private key commands run with; unset: runs are refused as unreachable. */
  NOMOS_SSH_KEY: z.string().min(1).optional(),
  NOMOS_RUN_WAIT_MS: z.coerce.number().int().min(0).max(600_000).default(30_000),
  NOMOS_RUN_HARD_LIMIT_MS: z.coerce.number().int().min(1_000).default(30 * 60_000),
  NOMOS_APPROVAL_TTL_MS: z.coerce.number().int().min(1_000).default(15 * 60_000),
  NOMOS_HUNG_AFTER_MS: z.coerce.number().int().min(0).default(10_000),
  /** How often a server renews the claims of the executions it runs; after NOMOS_LOST_AFTER_MS without, they are lost. */
  NOMOS_HEARTBEAT_MS: z.coerce.number().int().min(100).default(2_000),
  NOMOS_LOST_AFTER_MS: z.coerce.number().int().min(500).default(20_000),
  /** An approved execution not started this long after the grant is started by another server (or refused, lost). */
  NOMOS_APPROVED_GRACE_MS: z.coerce.number().int().min(100).default(5_000),
  /** How long a server's turn lease lasts unless renewed (how soon a dead server's session takes a turn again). */
  NOMOS_TURN_LEASE_MS: z.coerce.number().int().min(500).default(15_000),
  /** How often pending approvals past their TTL are recorded as expired. */
  NOMOS_SWEEP_MS: z.coerce.number().int().min(100).default(5_000),
  /**
   * How long a clean shutdown may take before the server exits anyway: long enough to drain requests that wait on
   * the read models (NOMOS_READ_WAIT_MS's default), short for a service manager.
   */
  NOMOS_SHUTDOWN_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  /** Any OpenAI-compatible provider; without OPENAI_BASE_URL or OPENAI_API_KEY the agent is off (POST /chat: 503). */
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.url().optional(),
  NOMOS_MODEL: z.string().min(1).default('gpt-4o-mini'),
  /** The model's context window in tokens; unset: the model's known window (src/agent/tokens.ts), else 32 000. */
  NOMOS_CONTEXT_TOKENS: z.coerce.number().int().min(1_000).max(10_000_000).optional(),
  /** Prices per model per million tokens, as JSON: {"gpt-4o-mini": {"input": 0.15, "output": 0.6, "cached_input": 0.075}}. */
  NOMOS_MODEL_PRICES: z.string().optional(),
  /** Host names and CIDRs http_get may reach though not public (a LAN wiki); unset: the public internet only. */
  NOMOS_HTTP_GET_ALLOW: z.string().optional(),
  /** How long a large command's classification may take on a worker thread before it is refused as destructive (too-slow). */
  NOMOS_CLASSIFY_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(2_000),
  /** Notification channels (docs/notify.md): channel URLs separated by spaces, and/or a YAML file of them. */
  NOMOS_NOTIFY: z.string().optional(),
  NOMOS_NOTIFY_FILE: z.string().min(1).optional(),
  /** The console's address as operators reach it, for the links in notifications; unset: the server's own. */
  NOMOS_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** How often one server checks that each active host answers (an SSH handshake, nothing run): `5m`, `30s`, milliseconds, or `off`. */
  NOMOS_REACHABILITY_EVERY: z.string().default('5m').transform((text, ctx) => {
    const ms = parseIdleClose(text);
    if (ms === undefined) ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration: write 5m, 30s, 1h, milliseconds, or off (0) to never check hosts` });
    return ms ?? null;
  }),
  /** The verifiable log's signing key (docs/verifiable-log.md): a PEM PKCS#8 Ed25519 file; unset on the embedded default: <data dir>/signing-key.pem, made on first start. */
  NOMOS_SIGNING_KEY: z.string().min(1).optional(),
  /** The checkpoints' origin line and key name; unset: nomos/ and a digest of the public key. */
  NOMOS_LOG_ORIGIN: z.string().min(1).max(200).optional(),
  /** How soon a committed event is sealed into the log's Merkle tree. */
  NOMOS_SEAL_MS: z.coerce.number().int().min(10).max(600_000).default(1_000),
  /** A signed checkpoint after this many new events or this long (`1000,10s`, `500`, `30s`), whichever comes first. */
  NOMOS_CHECKPOINT_EVERY: z.string().default('1000,10s').transform((text, ctx) => {
    const every = parseCheckpointEvery(text);
    if (every === undefined) ctx.addIssue({ code: 'custom', message: `"${text}" is not a checkpoint interval: write a number of events (1000), a duration (30s, 5m), or both (1000,30s)` });
    return every ?? { events: null, ms: null };
  }),
  /** A session without activity this long is closed as partial, user_abandoned: `24h`, `90m`, milliseconds, or `off`. */
  NOMOS_SESSION_IDLE_CLOSE: z.string().default('24h').transform((text, ctx) => {
    const ms = parseIdleClose(text);
    if (ms === undefined) ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration: write 24h, 90m, 30s, 2d, milliseconds, or off (0) to never close idle sessions` });
    return ms ?? null;
  }),
});

export interface Config {
  readonly databaseUrl: string | null;
  readonly eventStoreUrl: string | null;
  readonly dataDir: string;
  readonly port: number;
  readonly host: string;
  readonly readWaitMs: number;
  readonly bodyLimit: number;
  readonly maxStreams: number;
  readonly tokens: readonly ApiToken[];
  readonly allowedHosts: readonly string[];
  readonly allowedOrigins: readonly string[];
  /** Paths of the PEM certificate and key; null: plain HTTP. */
  readonly tls: { readonly certPath: string; readonly keyPath: string } | null;
  readonly sshKeyPath: string | null;
  readonly execution: ExecutionSettings;
  readonly sweepMs: number;
  readonly turnLeaseMs: number;
  readonly shutdownMs: number;
  /** The model provider, or null when none is configured. */
  readonly llm: { readonly baseURL: string | null; readonly apiKey: string; readonly model: string } | null;
  /** NOMOS_CONTEXT_TOKENS, or null: the model's known window. */
  readonly contextTokens: number | null;
  /** Empty: no prices, no costs shown. */
  readonly modelPrices: ModelPrices;
  readonly httpGetAllow: AllowList;
  readonly classifyTimeoutMs: number;
  /** NOMOS_REACHABILITY_EVERY in milliseconds; null: hosts are not checked. */
  readonly reachabilityEveryMs: number | null;
  /** NOMOS_NOTIFY and NOMOS_NOTIFY_FILE's channels (none: nothing is sent), and NOMOS_PUBLIC_URL. */
  readonly notify: { readonly channels: readonly Channel[]; readonly publicUrl: string | null };
  /** NOMOS_SESSION_IDLE_CLOSE in milliseconds; null: idle sessions stay open. */
  readonly sessionIdleCloseMs: number | null;
  /** The verifiable log: NOMOS_SIGNING_KEY (null: none given), NOMOS_LOG_ORIGIN, NOMOS_SEAL_MS, NOMOS_CHECKPOINT_EVERY. */
  readonly log: { readonly signingKeyPath: string | null; readonly origin: string | null; readonly sealMs: number; readonly checkpointEvery: CheckpointEvery };
}

/** A checkpoint after `events` new leaves or `ms` since the last, whichever first; null: not by that measure. */
export interface CheckpointEvery {
  readonly events: number | null;
  readonly ms: number | null;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = Env.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`bad configuration: ${problems}`);
  }
  const e = parsed.data;
  if ((e.NOMOS_TLS_CERT === undefined) !== (e.NOMOS_TLS_KEY === undefined)) {
    throw new Error(`bad configuration: NOMOS_TLS_CERT and NOMOS_TLS_KEY go together; only ${e.NOMOS_TLS_CERT === undefined ? 'NOMOS_TLS_KEY' : 'NOMOS_TLS_CERT'} is set`);
  }
  return {
    databaseUrl: e.DATABASE_URL ?? null,
    eventStoreUrl: e.EVENTSTORE_URL ?? null,
    dataDir: e.NOMOS_DATA_DIR,
    port: e.PORT,
    host: e.HOST,
    readWaitMs: e.NOMOS_READ_WAIT_MS,
    bodyLimit: e.NOMOS_BODY_LIMIT,
    maxStreams: e.NOMOS_MAX_STREAMS,
    tokens: parseTokens(e.NOMOS_TOKENS ?? ''),
    allowedHosts: parseAllowedHosts(e.NOMOS_ALLOWED_HOSTS ?? ''),
    allowedOrigins: parseAllowedOrigins(e.NOMOS_ALLOWED_ORIGINS ?? ''),
    tls: e.NOMOS_TLS_CERT !== undefined && e.NOMOS_TLS_KEY !== undefined ? { certPath: e.NOMOS_TLS_CERT, keyPath: e.NOMOS_TLS_KEY } : null,
    sshKeyPath: e.NOMOS_SSH_KEY ?? null,
    execution: {
      shortWaitMs: e.NOMOS_RUN_WAIT_MS,
      hardLimitMs: e.NOMOS_RUN_HARD_LIMIT_MS,
      approvalTtlMs: e.NOMOS_APPROVAL_TTL_MS,
      hungAfterMs: e.NOMOS_HUNG_AFTER_MS,
      heartbeatMs: e.NOMOS_HEARTBEAT_MS,
      lostAfterMs: e.NOMOS_LOST_AFTER_MS,
      approvedGraceMs: e.NOMOS_APPROVED_GRACE_MS,
    },
    turnLeaseMs: e.NOMOS_TURN_LEASE_MS,
    shutdownMs: e.NOMOS_SHUTDOWN_MS,
    sweepMs: e.NOMOS_SWEEP_MS,
    // A local server often needs no key; OpenAI itself needs one and no base URL.
    llm: e.OPENAI_BASE_URL || e.OPENAI_API_KEY ? { baseURL: e.OPENAI_BASE_URL ?? null, apiKey: e.OPENAI_API_KEY ?? 'none', model: e.NOMOS_MODEL } : null,
    contextTokens: e.NOMOS_CONTEXT_TOKENS ?? null,
    modelPrices: parseModelPrices(e.NOMOS_MODEL_PRICES ?? ''),
    httpGetAllow: parseAllowList(e.NOMOS_HTTP_GET_ALLOW ?? ''),
    classifyTimeoutMs: e.NOMOS_CLASSIFY_TIMEOUT_MS,
    sessionIdleCloseMs: e.NOMOS_SESSION_IDLE_CLOSE,
    reachabilityEveryMs: e.NOMOS_REACHABILITY_EVERY,
    log: { signingKeyPath: e.NOMOS_SIGNING_KEY ?? null, origin: e.NOMOS_LOG_ORIGIN ?? null, sealMs: e.NOMOS_SEAL_MS, checkpointEvery: e.NOMOS_CHECKPOINT_EVERY },
    notify: { channels: parseNotifyChannels(e.NOMOS_NOTIFY ?? '', e.NOMOS_NOTIFY_FILE === undefined ? null : readNotifyFile(e.NOMOS_NOTIFY_FILE)), publicUrl: e.NOMOS_PUBLIC_URL ?? null },
  };
}

/** NOMOS_NOTIFY_FILE's text, or a start-stopping message saying why it cannot be read. */
function readNotifyFile(path: string): { path: string; text: string } {
  try {
    return { path, text: readFileSync(path, 'utf8') };
  } catch (error) {
    throw new Error(`bad configuration: NOMOS_NOTIFY_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}

const DURATION_UNITS_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** NOMOS_SESSION_IDLE_CLOSE: `24h`, `90m`, `30s`, `2d`, `500ms` or bare milliseconds; null for off or 0; undefined when unreadable. */
export function parseIdleClose(text: string): number | null | undefined {
  const t = text.trim().toLowerCase();
  if (t === 'off' || t === '0') return null;
  const match = /^(\d+)\s*(ms|s|m|h|d)?$/.exec(t);
  if (!match) return undefined;
  const ms = Number(match[1]) * DURATION_UNITS_MS[match[2] ?? 'ms']!;
  return Number.isSafeInteger(ms) && ms > 0 ? ms : ms === 0 ? null : undefined;
}

/** NOMOS_CHECKPOINT_EVERY: `1000` events, `30s` (a duration as NOMOS_SESSION_IDLE_CLOSE takes), or `1000,30s`; undefined when unreadable. */
export function parseCheckpointEvery(text: string): CheckpointEvery | undefined {
  let events: number | null = null;
  let ms: number | null = null;
  for (const part of text.split(',').map((p) => p.trim())) {
    if (/^\d+$/.test(part) && events === null) events = Number(part);
    else if (/^\d+\s*(ms|s|m|h|d)$/i.test(part) && ms === null) ms = parseIdleClose(part) ?? null;
    else return undefined;
  }
  if ((events === null || events < 1 || !Number.isSafeInteger(events)) && ms === null) return undefined;
  return { events: events !== null && events >= 1 ? events : null, ms };
}

/** NOMOS_MODEL_PRICES: a JSON object of model → {input, output, cached_input?} per million tokens; empty: none. */
export function parseModelPrices(text: string): ModelPrices {
  if (text.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('bad configuration: NOMOS_MODEL_PRICES is not JSON; write {"MODEL": {"input": USD, "output": USD}} per million tokens');
  }
  const parsed = ModelPrices.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ');
    throw new Error(`bad configuration: NOMOS_MODEL_PRICES: ${problems}; write {"MODEL": {"input": USD, "output": USD, "cached_input": USD}} per million tokens`);
  }
  return parsed.data;
}
