// A receipt (GET /approvals/:id/receipt, GET /executions/:id/receipt): the proof that an approval or an execution
// is in the signed log, saved as a file exactly as served. Fetched with the signed-in token (a plain link would
// carry none); 503 receipt_not_ready says, with Retry-After, when the next checkpoint will cover it.
import { ApiError, headers } from '../../lib/api.ts';
import { auth } from '../../lib/auth.svelte.ts';
import { saveFile } from '../audit/export.ts';

export type ReceiptKind = 'approval' | 'execution';

/** What the page says when the checkpoint does not cover it yet, in seconds (null: the server did not say). */
export class NotSealedYet extends Error {
  constructor(readonly retryAfter: number | null) {
    super(`not sealed into a checkpoint yet — try again ${retryAfter === null ? 'in a moment' : `in ${retryAfter} s`}`);
    this.name = 'NotSealedYet';
  }
}

export const receiptName = (kind: ReceiptKind, id: string): string => `nomos-receipt-${kind}-${id}.json`;

const PATHS: Record<ReceiptKind, string> = { approval: '/approvals', execution: '/executions' };

/** Retry-After as whole seconds from now: delta-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now: number = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Fetches the receipt and saves it as nomos-receipt-<kind>-<id>.json; returns the file's name. */
export async function downloadReceipt(kind: ReceiptKind, id: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(`${PATHS[kind]}/${encodeURIComponent(id)}/receipt`, { headers: headers({ accept: 'application/json, application/problem+json' }) });
  } catch (error) {
    throw new ApiError(0, 'unreachable', `the server did not answer (${error instanceof Error ? error.message : String(error)})`, null);
  }
  const text = await res.text();
  if (!res.ok) {
    let problem: { code?: string; detail?: string } = {};
    try {
      problem = JSON.parse(text) as typeof problem;
    } catch {
      // not a problem document: the status says it
    }
    if (res.status === 503 && problem.code === 'receipt_not_ready') throw new NotSealedYet(retryAfterSeconds(res.headers.get('retry-after')));
    if (res.status === 401) auth.unauthenticated(problem.detail ?? 'sign in');
    throw new ApiError(res.status, problem.code ?? `http_${res.status}`, problem.detail ?? res.statusText, problem);
  }
  const name = receiptName(kind, id);
  saveFile(name, 'application/json', text);
  return name;
}
