// iproute2's ip: which objects and verbs only show. ip matches an object or verb by any prefix, in the order of its
// own tables, so `ip l s eth0 down` is `ip link set`: an object is resolved the way ip resolves it, and a verb reads
// only when it is one of show, list, lst or get spelled in full, or absent. -batch, -force and `netns exec` (which
// runs a command) are not read-only.
import type { Invocation } from './args.ts';
import type { Judgement } from './judgement.ts';
import { OTHER, READS, unlisted } from './judgement.ts';
import type { OptionTable } from './option-table.ts';
import { readArgs } from './option-table.ts';

// ip's global options, spelled as ip documents them. Left out: -b/-batch, -force, -rcvbuf, -l/-loops.
export const IP_GLOBAL: OptionTable = {
  words: `4 6 0 B M s stats statistics d details h human iec r resolve o oneline t timestamp ts tshort j json p pretty br
    brief c color=? N Numeric a all n= netns= f= family= V Version help`,
  stopAtOperand: true,
};

/** ip's objects in the order of its command table: a word names the first object it is a prefix of. */
const OBJECTS = [
  'address', 'addrlabel', 'maddress', 'route', 'rule', 'neighbor', 'neighbour', 'ntable', 'ntbl', 'link', 'l2tp', 'fou',
  'ila', 'macsec', 'tunnel', 'tuntap', 'tap', 'token', 'tcpmetrics', 'tcp_metrics', 'monitor', 'xfrm', 'mroute', 'mrule',
  'netns', 'netconf', 'vrf', 'sr', 'nexthop', 'mptcp', 'ioam', 'stats', 'help',
];

/** Objects whose show forms only read; the rest (monitor, xfrm, l2tp, …) are left out. */
const SHOWN = new Set([
  'address', 'addrlabel', 'maddress', 'route', 'rule', 'neighbor', 'neighbour', 'ntable', 'ntbl', 'link', 'tunnel', 'tuntap',
  'tap', 'token', 'tcpmetrics', 'tcp_metrics', 'mroute', 'mrule', 'netns', 'netconf', 'vrf', 'nexthop', 'help',
]);

const READ_VERBS = ['show', 'list', 'lst', 'get'];

export const ipObject = (word: string): string | undefined => OBJECTS.find((o) => word !== '' && o.startsWith(word));

export function judgeIp(inv: Invocation): Judgement {
  if (inv.name !== 'ip') return OTHER;
  const global = readArgs(inv.args, IP_GLOBAL);
  if (!global.ok) return unlisted(global.why);
  const [objectWord, verbWord] = global.operands;
  if (objectWord === undefined) return READS;
  if (objectWord.value === undefined || (verbWord !== undefined && verbWord.value === undefined)) return unlisted('an object or verb is only known at run time');
  const object = ipObject(objectWord.value);
  if (object === undefined || !SHOWN.has(object)) return OTHER;
  const verb = verbWord?.value;
  return verb === undefined || READ_VERBS.includes(verb) ? READS : OTHER;
}
