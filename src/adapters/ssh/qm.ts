// Decodes what `qm guest exec` prints: the guest agent's exec status as JSON. Keys are left out when empty
// ("out-data", "err-data"), and when qm stopped waiting (its --timeout) it prints only the guest PID.

import { constants } from 'node:os';
import { z } from 'zod';

const QmExecStatus = z.object({
  exited: z.union([z.boolean(), z.number()]).optional(),
  exitcode: z.number().int().optional(),
  signal: z.number().int().optional(),
  'out-data': z.string().optional(),
  'err-data': z.string().optional(),
  'out-truncated': z.union([z.boolean(), z.number()]).optional(),
  'err-truncated': z.union([z.boolean(), z.number()]).optional(),
  pid: z.number().int().optional(),
});

export type QmOutcome =
  | {
      readonly kind: 'exited';
      readonly exitCode: number | null;
      readonly signal: string | null;
      readonly stdout: string;
      readonly stderr: string;
      readonly truncated: boolean;
    }
  /** qm gave up waiting; the command still runs in the guest as `pid`. */
  | { readonly kind: 'running'; readonly pid: number }
  | { readonly kind: 'unreadable'; readonly reason: string };

function signalName(signal: number): string {
  const name = Object.entries(constants.signals).find(([, number]) => number === signal)?.[0];
  return name ?? String(signal);
}

export function decodeQmExec(stdout: string): QmOutcome {
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    return { kind: 'unreadable', reason: 'qm guest exec did not print JSON' };
  }
  const parsed = QmExecStatus.safeParse(json);
  if (!parsed.success) return { kind: 'unreadable', reason: `unexpected qm guest exec output: ${parsed.error.message}` };
  const status = parsed.data;
  if (!status.exited) {
    if (status.pid !== undefined) return { kind: 'running', pid: status.pid };
    return { kind: 'unreadable', reason: 'qm guest exec reported neither an exit nor a PID' };
  }
  return {
    kind: 'exited',
    exitCode: status.exitcode ?? null,
    signal: status.signal === undefined ? null : signalName(status.signal),
    stdout: status['out-data'] ?? '',
    stderr: status['err-data'] ?? '',
    truncated: Boolean(status['out-truncated']) || Boolean(status['err-truncated']),
  };
}
