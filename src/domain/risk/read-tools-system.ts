// Read-only option tables for tools that show the system: processes, users, hardware, the kernel log, the journal,
// the clock. What is left out changes something (clears a log, sets the clock or the host name, kills a socket) or
// writes a file, and is named beside the table.
import type { OptionTable } from './option-table.ts';
import type { Word } from './parse.ts';
import { FREE_FORM } from './read-tools-text.ts';

const HELP = 'help version';

const noOperands = (what: string) => (operands: readonly Word[]): string | undefined =>
  operands.length === 0 ? undefined : `${operands[0]?.text ?? ''} ${what}`;

/** date prints with `+FORMAT`; any other operand sets the clock. */
function dateFormatOnly(operands: readonly Word[]): string | undefined {
  const bad = operands.find((w) => !w.prefix.startsWith('+'));
  return bad === undefined ? undefined : `${bad.text} sets the clock`;
}

/** Words that only read for an env with no command (with one it is a wrapper, judged by what it runs). */
function onlyAssignments(operands: readonly Word[]): string | undefined {
  const bad = operands.find((w) => w.value !== '-' && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w.prefix));
  return bad === undefined ? undefined : `${bad.text} is a command`;
}

export const SYSTEM_TOOLS: Readonly<Record<string, OptionTable>> = {
  ps: {
    // ps only reads; its BSD options (`aux`) have no dash and read as operands.
    short: 'AaC:cdeFfg:G:HjlLMmNo:O:p:q:s:St:Tu:U:VwXyZ',
    long: `deselect Group= group= pid= ppid= quick-pid= sid= tty= user= User= format= forest context headers no-headers
      cols= columns= width= rows= lines= sort= cumulative info help=? version`,
    everyOptionReads: true,
  },
  pgrep: {
    short: 'd:lavwcfg:G:inoO:P:s:t:u:U:xF:Lr:AhV',
    long: `delimiter= list-name list-full inverse lightweight count full pgroup= group= ignore-case newest oldest older=
      parent= session= terminal= euid= uid= exact pidfile= logpidfile runstates= ignore-ancestors cgroup= ns= nslist= ${HELP}`,
    everyOptionReads: true,
  },
  pidof: { short: 'sxo:cqwSd:nzhV', everyOptionReads: true },
  // lsof only reads; its `+D dir`, `+L1` options have a plus and read as operands.
  lsof: { short: 'abhKlnNoOPRtUvVXQEwZ?c:d:D:e:F::g::i::L::o::p:r::s::S::T::u:x::', everyOptionReads: true },
  free: {
    short: 'bkmghltvws:c:V',
    long: `bytes kilo mega giga tera peta kibi mebi gibi tebi pebi human si lohi total committed seconds= count= wide line ${HELP}`,
    everyOptionReads: true,
  },
  uptime: { short: 'psrhV', long: 'pretty since raw container help version', everyOptionReads: true },
  uname: { short: 'asnrvmpio', long: `all kernel-name nodename kernel-release kernel-version machine processor hardware-platform operating-system ${HELP}`, everyOptionReads: true },
  whoami: { long: HELP, everyOptionReads: true },
  groups: { long: HELP, everyOptionReads: true },
  users: { long: HELP, everyOptionReads: true },
  arch: { long: HELP, everyOptionReads: true },
  nproc: { long: `all ignore= ${HELP}`, everyOptionReads: true },
  tty: { short: 's', long: `silent quiet ${HELP}`, everyOptionReads: true },
  id: { short: 'aZgGnruz', long: `context group groups name real user zero ${HELP}`, everyOptionReads: true },
  w: { short: 'husfoipV', long: 'no-header no-current short from old-style ip-addr pids help version', everyOptionReads: true },
  who: { short: 'abdHlmpqrstTuw', long: `all boot dead heading ips login lookup process count runlevel short time mesg users message writable ${HELP}`, everyOptionReads: true },
  last: {
    short: 'adf:Fin:Rs:t:p:wxhV',
    long: 'hostlast dns file= fulltimes ip limit= nohostname since= until= present= fullnames system time-format= help version',
    numeric: true,
    everyOptionReads: true,
  },
  // Left out: -C/--clear and -S/--set (they change the records).
  lastlog: { short: 'b:t:u:R:h', long: 'before= time= user= root= help' },
  getent: { short: 's:Ai', long: `service= no-addrconfig no-idn usage ${HELP}`, everyOptionReads: true },
  printenv: { short: '0', long: `null ${HELP}`, everyOptionReads: true },
  locale: { short: 'amckv', long: `all-locales charmaps category-name keyword-name verbose usage ${HELP}`, everyOptionReads: true },
  lscpu: {
    short: 'abBcJxyhVe::p::C::s:',
    long: `all online bytes caches=? offline json extended=? parse=? sysroot= hex physical output-all ${HELP}`,
    everyOptionReads: true,
  },
  lsmem: { short: 'JPabno:rS:s:hV', long: `json pairs all bytes noheadings output= output-all raw split= sysroot= summary=? ${HELP}`, everyOptionReads: true },
  lspci: { short: 'mnvtbxkDPqQJs:d:i:p:A:H:F:O:', everyOptionReads: true },
  lsusb: { short: 'vts:d:D:Vh', long: `verbose tree ${HELP}`, everyOptionReads: true },
  lsmod: { long: HELP, everyOptionReads: true },
  modinfo: { short: '0aFdlpnk:b:hV', long: `null author field= description license parameters filename set-version= basedir= ${HELP}`, everyOptionReads: true },
  vmstat: { short: 'afmnsdDp:S:wtyhV', long: `active forks slabs one-header stats disk disk-sum partition= unit= wide timestamp no-first ${HELP}`, everyOptionReads: true },
  iostat: { short: 'cdhkmNstxyzHj:g:o:p::V', long: 'compact dec= human pretty', everyOptionReads: true },
  mpstat: { short: 'AHIP:no:TuV', long: 'dec=', everyOptionReads: true },
  // Left out: -s/--set (writes the limits in sensors.conf to the chips).
  sensors: { short: 'c:uAjfhv', long: `config-file= no-adapter fahrenheit bus-list ${HELP}` },
  nice: { short: 'n:', long: `adjustment= ${HELP}`, numeric: true, operands: noOperands('is a command'), stopAtOperand: true },
  env: { short: '0iu:v', long: `null ignore-environment unset= debug list-signal-handling ${HELP}`, operands: onlyAssignments, stopAtOperand: true },
  journalctl: {
    // Left out: --vacuum-*, --rotate, --flush, --sync, --relinquish-var, --smart-relinquish-var, --setup-keys,
    // --update-catalog (they change the journal), --cursor-file (writes the cursor), --image (mounts an image).
    short: 'MmD:S:U:c:b::u:t:p:g:kn::o:rxafqeNF:hT:',
    long: `system user machine= merge directory= file= root= namespace= since= until= cursor= after-cursor= boot=?
      list-boots unit= user-unit= identifier= priority= facility= grep= case-sensitive=? dmesg output= output-fields=
      lines=? reverse show-cursor utc catalog no-hostname no-full full all follow no-tail quiet no-pager pager-end
      fields field= disk-usage header list-catalog dump-catalog verify verify-key= interval= invocation= exclude-identifier= ${HELP}`,
  },
  dmesg: {
    // Left out: -C/-c (clear the buffer), -D/-E/-n (console logging).
    short: 'F:f:HJkL::l:Pprs:uwWxdeTtS',
    long: `file= facility= human json kernel color=? level= nopager force-prefix raw noescape syslog buffer-size= userspace
      follow follow-new decode show-delta reltime ctime notime time-format= since= until= ${HELP}`,
  },
  date: {
    // Left out: -s/--set, and any operand but `+FORMAT` (it sets the clock).
    short: 'd:f:I::Rr:u',
    long: `date= debug file= iso-8601=? resolution rfc-email rfc-822 rfc-2822 rfc-3339= reference= utc universal ${HELP}`,
    operands: dateFormatOnly,
  },
  hostname: {
    // Left out: -F/--file and -b/--boot, and any operand (they set the host name).
    short: 'aAdfiIsyV',
    long: `alias all-fqdns domain fqdn long ip-address all-ip-addresses short yp nis ${HELP}`,
    operands: noOperands('sets the host name'),
  },
  which: { short: 'as', everyOptionReads: true },
  type: { short: 'afptP', everyOptionReads: true },
  whereis: { short: 'bmsuBMSflg', everyOptionReads: true },
  showmount: { short: 'adehv', long: 'all directories exports no-headers help version', everyOptionReads: true },
  sleep: FREE_FORM,
};
