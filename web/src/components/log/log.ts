// The Log page's words: the seal's lag as a sentence, a finding of `nomos verify` as a line, and the public key's
// file name. Pure, so that the page and its tests read the same sentences.
import type { LogStatus } from '../../lib/types.ts';

const events = (n: number) => `${n} event${n === 1 ? '' : 's'}`;

/** How far the seal is behind the committed events, in words. */
export function sealWords(status: LogStatus): string {
  const waiting = status.lag_events;
  if (!status.sealed) {
    return waiting === 0
      ? 'Nothing to seal yet, and no server has sealed this log: a server with a signing key (NOMOS_SIGNING_KEY) seals it.'
      : `${events(waiting)} waiting to be sealed, but no server has sealed this log yet: a server with a signing key (NOMOS_SIGNING_KEY) seals it.`;
  }
  if (waiting > 0) return `${events(waiting)} waiting to be sealed, the sealer seals every second.`;
  if (status.tree_size === 0) return 'No events yet.';
  return status.tree_size === 1 ? 'The 1 event is sealed.' : `All ${status.tree_size} events sealed.`;
}

/** Events have waited this long with the seal not moving: the sealer is probably not running. */
export const STALLED_MS = 10_000;

/** Since when (as this page saw it) events wait while the seal stays where it is; null while nothing waits. */
export interface Waiting {
  position: number;
  since: number;
}

/**
 * The page's own watch of the seal: `sealed_at` says when the sealer last sealed, which after a quiet hour is an
 * hour ago however well it runs, so a stall is counted from when this page first saw events wait at that position.
 */
export function waiting(before: Waiting | null, status: LogStatus, now: number): Waiting | null {
  if (!status.sealed || status.lag_events === 0) return null;
  return before?.position === status.last_position ? before : { position: status.last_position, since: now };
}

export const stalledMs = (w: Waiting | null, now: number): number | null => (w !== null && now - w.since > STALLED_MS ? now - w.since : null);

const record = (v: unknown): Record<string, unknown> | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
const scalar = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v) ?? String(v));

/**
 * A finding as one line: its kind (or code) first, then its own words when it has them, else its other fields
 * (`edited — position 12, leaf_index 11, …`); anything else as JSON.
 */
export function findingText(finding: unknown): string {
  const f = record(finding);
  if (f === null) return scalar(finding);
  const kind = [f.kind, f.code].find((k): k is string => typeof k === 'string');
  const words = [f.message, f.detail, f.reason].find((w): w is string => typeof w === 'string');
  const rest = Object.entries(f)
    .filter(([k]) => k !== 'kind' && k !== 'code')
    .map(([k, v]) => `${k} ${scalar(v)}`)
    .join(', ');
  const text = words ?? rest;
  return kind === undefined ? (words ?? scalar(finding)) : text === '' ? kind : `${kind} — ${text}`;
}

/**
 * What a verification found, a line each: a list as it is; the record `nomos verify` keeps (the log's findings,
 * how many more it counted, the read models that differ from their rebuild from the events) taken apart; anything else as JSON.
 */
export function findingLines(findings: unknown): string[] {
  if (findings === null || findings === undefined) return [];
  if (Array.isArray(findings)) return findings.map(findingText);
  const f = record(findings);
  if (f === null) return [scalar(findings)];
  const known = ['chain', 'more', 'read_models'];
  const lines = Array.isArray(f.chain) ? f.chain.map(findingText) : [];
  if (typeof f.more === 'number' && f.more > 0) lines.push(`… and ${f.more} more`);
  for (const model of Array.isArray(f.read_models) ? f.read_models : []) {
    const m = record(model);
    const name = typeof m?.projection === 'string' ? m.projection : scalar(model);
    if (typeof m?.skipped === 'string') lines.push(`read model ${name}: not compared: ${m.skipped}`);
    else lines.push(`read model ${name} differs from its rebuild from the events${Array.isArray(m?.differences) ? ` (${m.differences.length} difference${m.differences.length === 1 ? '' : 's'} kept)` : ''}`);
  }
  const other = Object.keys(f).filter((k) => !known.includes(k));
  if (other.length > 0) lines.push(JSON.stringify(Object.fromEntries(other.map((k) => [k, f[k]]))));
  return lines;
}

/** nomos-1a2b3c4d5e6f7a8b.pub.pem from the origin nomos/1a2b3c4d5e6f7a8b: one name per key, safe on every file system. */
export function keyFileName(origin: string | null): string {
  const stem = (origin ?? 'nomos-log').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
  return `${stem || 'nomos-log'}.pub.pem`;
}

/**
 * When to read GET /log again without waiting for the event log to move (sealing appends no events): soon while
 * events wait to be sealed, later while sealed events wait for a checkpoint; null once caught up, or while no
 * server seals at all.
 */
export function recheckMs(status: LogStatus): number | null {
  if (!status.sealed) return null;
  if (status.lag_events > 0) return 1_000;
  return status.checkpoint === null || status.checkpoint.tree_size < status.tree_size ? 5_000 : null;
}
