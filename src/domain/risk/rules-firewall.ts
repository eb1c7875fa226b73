// Firewall tools: which forms only list rules, and which flush or delete rules, chains, tables or sets (a flushed rule
// set cannot be put back from the command line, and it may cut the host off).
import type { Invocation } from './args.ts';
import { named, options, positionals, subcommand, values } from './args.ts';
import type { Rule } from './rule.ts';

const isIptables = (inv: Invocation): boolean => /^(ip6?tables|ebtables|arptables)(-nft|-legacy)?$/.test(inv.name ?? '');
const isRestore = (inv: Invocation): boolean => /^ip6?tables(-nft|-legacy)?-restore$/.test(inv.name ?? '');
const isSave = (inv: Invocation): boolean => /^ip6?tables(-nft|-legacy)?-save$/.test(inv.name ?? '');

/** Every iptables-family tool name, for the rule that calls the rest a change. */
export const FIREWALL_TOOL = (inv: Invocation): boolean =>
  isIptables(inv) || isRestore(inv) || isSave(inv) || named('nft', 'ufw', 'firewall-cmd', 'ipset')(inv);

// Options with a value, so that a value such as `--comment "-F"` is never read as an option.
const IPT_VALUED = 'tAICDRNEPjgpsdiom';
const IPT_VALUED_LONG = [
  '--table', '--append', '--insert', '--check', '--delete', '--replace', '--new-chain', '--rename-chain', '--policy',
  '--jump', '--goto', '--protocol', '--source', '--destination', '--in-interface', '--out-interface', '--match',
  '--comment', '--dport', '--sport', '--dports', '--sports', '--to-destination', '--to-source', '--to-ports', '--to',
  '--state', '--ctstate', '--match-set', '--set-mark', '--log-prefix', '--uid-owner', '--gid-owner', '--reject-with',
  '--src-range', '--dst-range', '--limit', '--limit-burst', '--icmp-type', '--mac-source', '--wait-interval',
  '--set-counters', '--string', '--algo', '--hitcount', '--seconds', '--name', '--mask',
];
const IPT_DESTROYS = ['-F', '--flush', '-X', '--delete-chain', '-D', '--delete', '--init-table'];
const IPT_CHANGES = ['-A', '--append', '-I', '--insert', '-R', '--replace', '-N', '--new-chain', '-E', '--rename-chain', '-P', '--policy', '-Z', '--zero'];
const IPT_LISTS = ['-L', '--list', '-S', '--list-rules', '-C', '--check'];

const iptablesOptions = (inv: Invocation): string[] => options(inv, IPT_VALUED, IPT_VALUED_LONG).map((o) => o.name);

/** nft's statements: its words after the options, joined as nft joins them, split at `;` and newlines. */
function nftStatements(inv: Invocation): string[] {
  return positionals(inv, ['-f', '--file', '-I', '--includepath', '-D', '--define'])
    .map((p) => p ?? '')
    .join(' ')
    .split(/[;\n]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

const nftChecksOnly = (inv: Invocation): boolean => values(inv).some((v) => v === '-c' || v === '--check');
const nftLoadsFile = (inv: Invocation): boolean => values(inv).some((v) => v === '-f' || v === '--file' || v.startsWith('--file='));

const UFW_VALUED = ['--rule', '--dry-run'];

function firewallDestroys(inv: Invocation): boolean {
  if (isIptables(inv)) return iptablesOptions(inv).some((o) => IPT_DESTROYS.includes(o));
  // iptables-restore replaces every rule of the tables it loads, unless told not to flush or only to test.
  if (isRestore(inv)) return !values(inv).some((v) => ['-n', '--noflush', '-t', '--test'].includes(v));
  if (named('nft')(inv)) {
    if (nftChecksOnly(inv)) return false;
    return nftLoadsFile(inv) || nftStatements(inv).some((s) => /^(flush|delete|destroy)\b/.test(s));
  }
  if (named('ufw')(inv)) return ['reset', 'delete'].includes(subcommand(inv, UFW_VALUED) ?? '');
  if (named('firewall-cmd')(inv)) return values(inv).some((v) => /^--(remove-|delete-|reset-to-defaults|load-.*-defaults)/.test(v));
  if (named('ipset')(inv)) return ['destroy', 'x', 'flush', 'del', '-X', '-F', '-D'].includes(values(inv).find((v) => !v.startsWith('-') || v.length === 2) ?? '');
  return false;
}

function firewallLists(inv: Invocation): boolean {
  if (isIptables(inv)) {
    const opts = iptablesOptions(inv);
    return opts.some((o) => IPT_LISTS.includes(o)) && !opts.some((o) => IPT_DESTROYS.includes(o) || IPT_CHANGES.includes(o));
  }
  if (isSave(inv)) return !values(inv).some((v) => v === '-f' || v.startsWith('--file'));
  if (named('nft')(inv)) {
    if (nftChecksOnly(inv)) return true;
    const statements = nftStatements(inv);
    if (statements.length === 0) return values(inv).some((v) => v === '-v' || v === '--version');
    return !nftLoadsFile(inv) && statements.every((s) => /^(list|describe|monitor)\b/.test(s));
  }
  if (named('ufw')(inv)) {
    const [sub, arg] = positionals(inv, UFW_VALUED);
    return values(inv).includes('--dry-run') || ['status', 'show', 'version'].includes(sub ?? '') || (sub === 'app' && (arg === 'list' || arg === 'info'));
  }
  if (named('firewall-cmd')(inv)) {
    const args = values(inv);
    return args.length > 0 && args.every((v) => !v.startsWith('-') || /^(-V|-h|-q|--(state|list-.*|get-.*|query-.*|info-.*|zone(=.*)?|policy(=.*)?|permanent|check-config|version|help|quiet))$/.test(v));
  }
  if (named('ipset')(inv)) return ['list', 'save', 'test', 'version', 'help', '-L', '-S', '-T', '-V', '-H'].includes(values(inv).find((v) => !v.startsWith('-') || v.length === 2) ?? '');
  return false;
}

export const FIREWALL_DESTRUCTIVE_RULE: Rule = {
  id: 'firewall-flush',
  class: 'destructive',
  reason: 'flushes or deletes firewall rules, chains, tables or sets, or replaces the whole rule set',
  examples: [
    'iptables -F',
    'iptables -t nat -F',
    'iptables -X DOCKER-USER',
    'iptables -D INPUT 3',
    'ip6tables --flush',
    'iptables-restore < /etc/iptables/rules.v4',
    'nft flush ruleset',
    "nft 'delete table inet filter'",
    'nft -f /etc/nftables.conf',
    'ufw --force reset',
    'ufw delete allow 22/tcp',
    'firewall-cmd --permanent --remove-port=8080/tcp',
    'ipset flush blocklist',
  ],
  match: firewallDestroys,
};

export const FIREWALL_READ_RULE: Rule = {
  id: 'firewall-read',
  class: 'reversible_low',
  reason: 'only lists firewall rules',
  examples: ['iptables -L -n', 'iptables -t nat -nvL', 'iptables -S INPUT', 'iptables-save', 'nft list ruleset', 'nft -a list table inet filter', 'ufw status verbose', 'firewall-cmd --list-all --zone=public', 'ipset list'],
  match: firewallLists,
};
