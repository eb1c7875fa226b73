// How a rule's parts read on the page: its match words with alternatives as `restart|reload`, and who decided an
// execution or approval ("rule restart-rclone (v3)", "classifier").
import type { PolicyRule } from './types.ts';

export const matchText = (match: PolicyRule['match']): string => match.map((w) => (typeof w === 'string' ? w : w.join('|'))).join(' ');

/** What an execution's or approval's row says decided it; absent on rows recorded before the policy was consulted. */
interface Decided {
  rule_id?: string | null | undefined;
  policy_version?: number | null | undefined;
  verdict?: { rule_id?: string | undefined; policy_version?: number | undefined } | null | undefined;
}

export function decidedBy(row: Decided): string | null {
  const rule = row.rule_id ?? row.verdict?.rule_id ?? null;
  if (rule === null) return null;
  if (rule === 'classifier') return 'classifier';
  const version = row.policy_version ?? row.verdict?.policy_version ?? null;
  const at = version === null || version === 0 ? '' : ` (v${version})`;
  return rule === 'floor' ? `floor${at}` : `rule ${rule}${at}`;
}

export const decisionTone = (decision: string): string => (decision === 'allow' ? 'ok' : decision === 'deny' ? 'bad' : 'warn');
