// `nomos verify receipt FILE [--key PEM] [--json]`: checks a receipt (GET /approvals/:id/receipt,
// /executions/:id/receipt) offline and says what it proves in words, or what failed. Exit 0: verified; 2: a check
// failed (tampered or forged); 1: the file (or the key) cannot be read or is not a receipt.
import { readFile } from 'node:fs/promises';
import { actorName } from '../domain/messages.ts';
import type { ReceiptSummary } from '../log/receipts.ts';
import { MalformedReceipt, type ReceiptVerification, type TrustedKey, trustedKeyOf, verifyReceipt } from '../log/verify-receipt.ts';

export const RECEIPT_EXIT = { verified: 0, unreadable: 1, failed: 2 } as const;

type Outcome = { lines: string[]; exitCode: number };

function unreadable(why: string, json: boolean | undefined): Outcome {
  return { lines: [json === true ? JSON.stringify({ verified: false, error: why }) : `not verified: ${why}`], exitCode: RECEIPT_EXIT.unreadable };
}

const who = (actor: ReceiptSummary['requested_by']) => (actor ? actorName(actor) : 'an unnamed actor');

/** What the receipt says happened, as an auditor would say it. */
function story(kind: string, id: string, s: ReceiptSummary): string[] {
  const what = `\`${s.command}\` on ${s.target}`;
  const approval = s.approval;
  const decided = !approval
    ? `${what} needed no approval`
    : approval.status === 'granted'
      ? `${who(approval.by)} approved ${what}`
      : approval.status === 'denied'
        ? `${who(approval.by)} denied ${what} (${approval.reason ?? 'no reason given'})`
        : approval.status === 'expired'
          ? `nobody decided on ${what}: the approval expired`
          : approval.status === 'cancelled'
            ? `the approval of ${what} was cancelled by ${who(approval.by)} (${approval.reason ?? 'no reason given'})`
            : `${what} was awaiting approval`;
  const ran = s.execution === 'not_started' ? 'it did not start' : s.execution === 'running' ? 'it started; its end is not in the receipt' : `it ${s.execution.replace('_', ' ')}${s.exit_code === null ? '' : `, exit code ${s.exit_code}`}`;
  return [
    `${kind} ${id}: ${decided}; ${ran}`,
    `  requested by ${who(s.requested_by)} in session ${s.session_id}; ${s.risk_class}, decision ${s.decision ?? 'none recorded'}, rule ${s.rule ?? 'none recorded'} (${s.reason})`,
    ...(s.goal === null ? [] : [`  goal: ${s.goal}`]),
    ...(s.plan === null ? [] : [`  plan: ${s.plan.map((title, i) => `${i + 1}. ${title}`).join('; ')}`]),
  ];
}

function report(result: ReceiptVerification): string[] {
  const { receipt } = result;
  const failed = result.checks.filter((c) => !c.ok);
  if (failed.length > 0) {
    return [
      `NOT VERIFIED: the receipt of ${receipt.kind} ${receipt.id} failed ${failed.length} of ${result.checks.length} checks`,
      ...failed.map((c) => `  ${c.check}${c.position === null ? '' : ` at position ${c.position}`}: ${c.detail}`),
    ];
  }
  const signer = result.keySupplied
    ? 'signed by the key you supplied'
    : "signed by the receipt's own key, which was not independently supplied: pass --key with the log's public key (GET /log/public-key, kept apart from receipts) to rule out a forged log";
  return [
    `VERIFIED: ${story(receipt.kind, receipt.id, receipt.summary)[0]!}`,
    ...story(receipt.kind, receipt.id, receipt.summary).slice(1),
    `  proven: ${receipt.entries.length} events (${receipt.entries.map((e) => `${e.type} at ${e.position}`).join(', ')}) are in the log ${receipt.origin}, checkpoint of tree size ${receipt.tree_size}, ${signer}`,
  ];
}

export async function verifyReceiptCommand(file: string, options: { key?: string; json?: boolean }): Promise<{ lines: string[]; exitCode: number }> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    return unreadable(error instanceof SyntaxError ? `${file} is not JSON (${error.message})` : `cannot read ${file}: ${(error as Error).message}`, options.json);
  }
  let trusted: TrustedKey | undefined;
  if (options.key !== undefined) {
    try {
      trusted = trustedKeyOf(await readFile(options.key, 'utf8'));
    } catch (error) {
      return unreadable(`cannot read the key ${options.key}: ${(error as Error).message}`, options.json);
    }
  }
  let result: ReceiptVerification;
  try {
    result = verifyReceipt(json, trusted);
  } catch (error) {
    if (error instanceof MalformedReceipt) return unreadable(`${file} is not a receipt: ${error.message}`, options.json);
    throw error;
  }
  const exitCode = result.verified ? RECEIPT_EXIT.verified : RECEIPT_EXIT.failed;
  if (options.json === true) {
    const { receipt } = result;
    const answer = { verified: result.verified, key_supplied: result.keySupplied, kind: receipt.kind, id: receipt.id, origin: receipt.origin, tree_size: receipt.tree_size, summary: receipt.summary, checks: result.checks };
    return { lines: [JSON.stringify(answer, null, 2)], exitCode };
  }
  return { lines: report(result), exitCode };
}
