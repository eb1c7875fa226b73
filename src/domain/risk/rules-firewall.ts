// Firewall tools: which forms only list rules, and which flush or delete rules, chains, tables or sets (a flushed rule
// set cannot be put back from the command line, and it may cut the host off).
import type { Invocation } from './args.ts';
import { named, options, positionals, subcommand, values } from './args.ts';
import type { Judgement } from './judgement.ts';
import { OTHER, READS, byTable, unlisted } from './judgement.ts';
import type { OptionTable } from './option-table.ts';
import { readArgs } from './option-table.ts';
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

const IPT_CHANGES = ['-A', '--append', '-I', '--insert', '-R', '--replace', '-N', '--new-chain', '-E', '--rename-chain', '-P', '--policy', '-Z', '--zero'];
const IPT_COMMANDS = ['--table', '--append', '--insert', '--check', '--delete', '--replace', '--new-chain', '--rename-chain', '--policy'];
// Listing (-L, -S) and checking a rule (-C with its rule spec). Left out: -Z (zeroes counters), --modprobe (runs a program).
const IPT_LIST: OptionTable = {
  short: 'LSCnvxt:wW:46p:s:d:i:o:j:g:m:f',
  long: `list list-rules check numeric verbose exact line-numbers table= wait=? wait-interval= help version
    ${IPT_VALUED_LONG.filter((o) => !IPT_COMMANDS.includes(o)).map((o) => `${o.slice(2)}=`).join(' ')}`,
};
// Left out: -M/--modprobe (runs a program), -f/--file (writes).
const IPT_SAVE: OptionTable = { short: 'ct:', long: 'counters table= help version' };
const NFT: OptionTable = {
  short: 'ansjtNSuyTpcvhI:D:ef:',
  long: 'handle numeric stateless json terse service numeric-priority numeric-protocol numeric-time check includepath= define= echo file= version help',
};
const UFW: OptionTable = { long: 'dry-run version help' };
// ipset's options are words after one dash. Left out: -f/-file (save writes it, restore reads statements from it).
const IPSET: OptionTable = { words: 'o= output= n name t terse s sorted r resolve q quiet exist L S T V H' };
const IPSET_READS = ['list', 'save', 'test', 'version', 'help'];

function judgeIptables(inv: Invocation): Judgement {
  const opts = iptablesOptions(inv);
  if (!opts.some((o) => ['-L', '--list', '-S', '--list-rules', '-C', '--check'].includes(o)) || opts.some((o) => IPT_CHANGES.includes(o))) return OTHER;
  return byTable(inv.args, IPT_LIST);
}

function judgeNft(inv: Invocation): Judgement {
  const reading = readArgs(inv.args, NFT);
  if (!reading.ok) return unlisted(reading.why);
  const check = reading.options.some((o) => o.name === '-c' || o.name === '--check');
  if (check) return READS;
  if (nftLoadsFile(inv)) return OTHER;
  const statements = nftStatements(inv);
  if (statements.length === 0) return reading.options.some((o) => ['-v', '--version', '-h', '--help'].includes(o.name)) ? READS : OTHER;
  return statements.every((s) => /^(list|describe|monitor)\b/.test(s)) ? READS : OTHER;
}

function judgeUfw(inv: Invocation): Judgement {
  const reading = readArgs(inv.args, UFW);
  if (!reading.ok) return unlisted(reading.why);
  if (reading.options.some((o) => o.name === '--dry-run')) return READS;
  const [sub, arg, ...rest] = reading.operands.map((w) => w.value);
  if (sub === 'status') return arg === undefined || ((arg === 'verbose' || arg === 'numbered') && rest.length === 0) ? READS : OTHER;
  if (sub === 'show' || sub === 'version') return READS;
  return sub === 'app' && (arg === 'list' || arg === 'info') ? READS : OTHER;
}

function judgeIpset(inv: Invocation): Judgement {
  const reading = readArgs(inv.args, IPSET);
  if (!reading.ok) return unlisted(reading.why);
  const command = reading.operands[0]?.value;
  const flag = reading.options.some((o) => ['-L', '-S', '-T', '-V', '-H'].includes(o.name));
  return flag || IPSET_READS.includes(command ?? '') ? READS : OTHER;
}

// firewall-cmd's queries are options themselves: every option must be one that only asks.
const FIREWALL_CMD_READS = /^(-V|-h|-q|--(state|list-.*|get-.*|query-.*|info-.*|zone(=.*)?|policy(=.*)?|permanent|check-config|version|help|quiet))$/;

/** How a firewall tool is judged: its listing forms, with only the options that keep them listing. */
export function judgeFirewall(inv: Invocation): Judgement {
  if (isIptables(inv)) return judgeIptables(inv);
  if (isSave(inv)) return byTable(inv.args, IPT_SAVE);
  if (named('nft')(inv)) return judgeNft(inv);
  if (named('ufw')(inv)) return judgeUfw(inv);
  if (named('ipset')(inv)) return judgeIpset(inv);
  if (named('firewall-cmd')(inv)) {
    const args = values(inv);
    if (args.length === 0) return OTHER;
    const bad = args.find((v) => v.startsWith('-') && !FIREWALL_CMD_READS.test(v));
    return bad === undefined ? READS : OTHER;
  }
  return OTHER;
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
  match: (inv) => judgeFirewall(inv).kind === 'reads',
};
