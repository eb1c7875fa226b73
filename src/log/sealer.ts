// The sealer: behind the write path, on the one server holding its lease, integrates committed events into the
// log's Merkle tree in global-position order and signs checkpoints (docs/verifiable-log.md). Each batch is one
// transaction guarded by the size it began at, so a sealer that lost its lease mid-batch writes nothing and two
// sealers can never fork the tree.
import { createHash, type KeyObject } from 'node:crypto';
import type { Db } from '../ports/db.ts';
import { pause } from '../leases/led-loop.ts';
import { leafOf } from './leaf.ts';
import { Frontier, leafHash } from './merkle.ts';
import { checkpointBody, signNote } from './note.ts';
import { publicKeyPem } from './keys.ts';
import { claimSeal, eventsBetween, horizon, latestCheckpoint, readNodes, settled, writeBatch } from './store.ts';

export interface SealSettings {
  /** How soon a committed event is in the tree: the pause between two rounds (NOMOS_SEAL_MS). */
  readonly sealMs: number;
  /** A checkpoint once the tree grew by this many leaves, or this long after the last one if it grew at all. */
  readonly checkpointEvery: { readonly events: number | null; readonly ms: number | null };
  /** The private signing key (NOMOS_SIGNING_KEY). */
  readonly key: KeyObject;
  /** The checkpoints' origin line and key name; null: derived from the key (logOrigin). */
  readonly origin: string | null;
  /** Events per transaction. */
  readonly batch?: number;
}

/** Refused to seal: the log is sealed with another key or origin. Said once; the lease is given up. */
export class SealRefused extends Error {}

const SETTLE_POLL_MS = 5;
const DEFAULT_BATCH = 2_000;

/** The default origin: one per key, the same on every server sharing it. */
export function logOrigin(key: KeyObject): string {
  return `nomos/${createHash('sha256').update(publicKeyPem(key)).digest('hex').slice(0, 16)}`;
}

export class Sealer {
  private readonly publicKey: string;
  private readonly origin: string;

  constructor(
    private readonly db: Db,
    private readonly settings: SealSettings,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.publicKey = publicKeyPem(settings.key);
    this.origin = settings.origin ?? logOrigin(settings.key);
  }

  /** Seals until `signal` aborts (the lead ended). */
  async run(signal: AbortSignal): Promise<void> {
    const state = await claimSeal(this.db, this.origin, this.publicKey);
    if (state.publicKey.trim() !== this.publicKey.trim()) {
      throw new SealRefused(`the log is sealed with another key (origin ${state.origin}); this server's NOMOS_SIGNING_KEY is not it, so it will not seal: give every server the same key file`);
    }
    if (state.origin !== this.origin) {
      throw new SealRefused(`the log is sealed under the origin "${state.origin}"; this server's NOMOS_LOG_ORIGIN is "${this.origin}", so it will not seal`);
    }
    const frontier = new Frontier(state.size, await this.edge(state.size));
    let lastPosition = state.lastPosition;
    const last = await latestCheckpoint(this.db);
    let checkpointed = { size: last?.treeSize ?? 0, at: last?.signedAt.getTime() ?? Number.NEGATIVE_INFINITY };
    const batch = this.settings.batch ?? DEFAULT_BATCH;
    while (!signal.aborted) {
      const { position: upTo, appenders } = await horizon(this.db);
      while (!(await settled(this.db, appenders))) {
        if (signal.aborted) return;
        await pause(SETTLE_POLL_MS, signal);
      }
      for (;;) {
        const events = upTo > lastPosition ? await eventsBetween(this.db, lastPosition, upTo, batch) : [];
        const fromSize = frontier.size;
        const leaves: { index: number; position: number }[] = [];
        const nodes: { level: number; index: number; hash: Buffer }[] = [];
        for (const event of events) {
          leaves.push({ index: frontier.size, position: event.position });
          nodes.push(...frontier.append(leafHash(leafOf(event))));
        }
        const newLast = events.at(-1)?.position ?? lastPosition;
        const now = this.clock().getTime();
        const due = frontier.size > checkpointed.size && (this.dueByEvents(frontier.size - checkpointed.size) || this.dueByTime(now - checkpointed.at));
        // A round with nothing new writes nothing, unless a checkpoint fell due by time.
        if (events.length === 0 && !due) break;
        const root = frontier.root();
        const checkpoint = due ? { root, note: signNote(checkpointBody({ origin: this.origin, size: frontier.size, root }), this.origin, this.settings.key) } : null;
        if (signal.aborted) return;
        await writeBatch(this.db, { fromSize, toSize: frontier.size, lastPosition: newLast, leaves, nodes, checkpoint });
        lastPosition = newLast;
        if (checkpoint) checkpointed = { size: frontier.size, at: now };
        if (events.length < batch) break;
      }
      await pause(this.settings.sealMs, signal);
    }
  }

  private dueByEvents(grown: number): boolean {
    const every = this.settings.checkpointEvery.events;
    return every !== null && grown >= every;
  }

  private dueByTime(elapsedMs: number): boolean {
    const every = this.settings.checkpointEvery.ms;
    return every !== null && elapsedMs >= every;
  }

  private async edge(size: number): Promise<Buffer[]> {
    const ids = Frontier.edgeNodes(size);
    const node = await readNodes(this.db, ids);
    return ids.map((id) => node(id.level, id.index));
  }
}
