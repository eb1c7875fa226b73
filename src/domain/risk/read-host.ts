// Read-only forms of package, disk, mount, process-inspection and rclone tools, each with the options it may take.
// `apt-get -s` is a simulation only without -o/-c (either can set APT::Get::Simulate=false or run hooks).
import type { Invocation } from './args.ts';
import type { Judgement } from './judgement.ts';
import { OTHER, READS, byTable, unlisted } from './judgement.ts';
import type { OptionTable } from './option-table.ts';
import { readArgs } from './option-table.ts';
import type { Word } from './parse.ts';
import { isSink } from './sinks.ts';
import type { VerbTool } from './subcommands.ts';
import { judgeVerbs, verbs } from './subcommands.ts';

const QUIET = { short: 'qh', long: 'quiet help version' };

// Left out of every apt tool: -o/--option, -c/--config-file (they set any configuration, hooks included).
const APT: VerbTool = {
  global: { ...QUIET, short: 'qhav', long: 'quiet help version' },
  verbs: {
    list: { table: { short: 'a', long: 'installed upgradable upgradeable all-versions manual-installed verbose' } },
    ...verbs('show policy search depends rdepends madison showsrc help', { table: { short: 'af', long: 'all-versions full names-only installed recurse' } }),
  },
};
const APT_CACHE: VerbTool = {
  global: { short: 'qhvnfai', long: 'quiet help version names-only full all-versions installed recurse important no-pre-depends no-depends no-recommends no-suggests no-conflicts no-breaks no-replaces no-enhances no-all-names no-generate' },
  verbs: verbs('policy show showpkg showsrc search depends rdepends madison pkgnames stats dump dumpavail unmet'),
  globalAnywhere: true,
};
const APT_GET_SIMULATE = ['-s', '--simulate', '--dry-run', '--just-print', '--no-act', '--recon'];
const APT_GET: OptionTable = {
  short: 'syqVuf',
  long: 'simulate dry-run just-print no-act recon assume-yes yes quiet verbose-versions show-upgraded fix-broken no-install-recommends install-recommends only-upgrade reinstall target-release= default-release= no-upgrade no-download',
  values: { '-t': () => true },
};
const APT_GET_SIMULATED = ['install', 'remove', 'upgrade', 'dist-upgrade', 'full-upgrade', 'autoremove', 'check', 'purge'];
const DPKG_READS = ['-l', '--list', '-s', '--status', '-L', '--listfiles', '-S', '--search', '-p', '--print-avail', '--get-selections', '--print-architecture', '--print-foreign-architectures', '--compare-versions', '--audit', '-C', '--version', '--help'];
const DPKG_QUERY: OptionTable = { short: 'lWsLSpf:', long: 'list show status listfiles search print-avail showformat= admindir= root= instdir= load-avail no-pager help version' };

export function judgePackages(inv: Invocation): Judgement {
  switch (inv.name) {
    case 'apt':
      return judgeVerbs(inv.args, APT);
    case 'apt-cache':
      return judgeVerbs(inv.args, APT_CACHE);
    case 'apt-config':
      return judgeVerbs(inv.args, { global: { short: 'qh', long: 'quiet help version empty format=' }, verbs: verbs('dump shell'), globalAnywhere: true });
    case 'dpkg-query':
      return byTable(inv.args, DPKG_QUERY);
    case 'apt-mark':
      return judgeVerbs(inv.args, { global: { short: 'h', long: 'help version' }, verbs: verbs('showauto showmanual showhold showinstall showremove showpurge') });
    case 'apt-get': {
      const reading = readArgs(inv.args, APT_GET);
      if (!inv.args.some((w) => APT_GET_SIMULATE.includes(w.value ?? '') || /^-[a-z]*s[a-z]*$/.test(w.value ?? ''))) return OTHER;
      if (!reading.ok) return unlisted(reading.why);
      return APT_GET_SIMULATED.includes(reading.operands[0]?.value ?? '') ? READS : OTHER;
    }
    case 'dpkg': {
      const [first] = inv.args;
      if (first?.value === undefined || !DPKG_READS.includes(first.value)) return OTHER;
      const bad = inv.args.slice(1).find((w) => w.value === undefined || w.value.startsWith('-'));
      return bad === undefined ? READS : unlisted(`${bad.text} is not an option known to only read`);
    }
    default:
      return OTHER;
  }
}


const LVM_REPORT: OptionTable = {
  short: 'ao:O:S:vqh',
  long: 'all options= sort= select= units= noheadings nosuffix separator= aligned segments readonly reportformat= binary rows unquoted nameprefixes verbose quiet help version maps columns colon short',
};

const STORAGE: Readonly<Record<string, OptionTable>> = {
  lsblk: { short: 'abdDzfimnOpPrsStTJlo:e:I:x:M:E:Q:y', long: 'all bytes nodeps discard zoned fs inodes ascii noheadings output-all paths pairs raw inverse scsi tree topology json list output= exclude= include= sort= width= merge dedup= filter= highlight= ct= ct-filter= properties-by= sysroot= shell help version' },
  // Left out: -c (a cache file other than /dev/null is written), -g (rewrites the cache).
  blkid: { short: 'dhiklLo:ps:t:U:uwn:O:S:', long: 'help version', values: { '-c': isSink } },
  pvs: LVM_REPORT, vgs: LVM_REPORT, lvs: LVM_REPORT,
  pvdisplay: { ...LVM_REPORT, short: 'aCcmo:O:S:vqhs' }, vgdisplay: { ...LVM_REPORT, short: 'aACcso:O:S:vqh' }, lvdisplay: { ...LVM_REPORT, short: 'aCcmo:O:S:vqh' },
  lvmdiskscan: { short: 'lvdh', long: 'lvmpartition verbose debug help' },
  // wipefs with no -a/-o only lists signatures. Left out: -b/--backup (writes backup files), -f.
  wipefs: { short: 'nJiO:pt:Qh', long: 'no-act json noheadings output= parsable types= quiet help version' },
  // Left out of sgdisk: -l (--load-backup writes the table from a file) and everything else that changes it.
  sgdisk: { short: 'pi:vODEfFLP', long: 'print info= verify print-mbr display-alignment end-of-largest first-in-largest first-aligned-in-largest list-types pretend' },
  gdisk: { short: 'l' },
  smartctl: { short: 'aixHAcjqnd:l:g:', long: 'all xall info health attributes capabilities json quiet nocheck= device= log= get= scan scan-open help version' },
};

/** fdisk, sfdisk and parted read only in their listing forms; any other form may write the partition table. */
function partitionLists(inv: Invocation): Judgement {
  switch (inv.name) {
    case 'fdisk':
      return listing(inv.args, { short: 'lxo:b:u::L::s', long: 'list list-details output= sector-size= units=? color=? getsz bytes' }, ['-l', '--list', '-x', '--list-details', '-s', '--getsz']);
    case 'sfdisk':
      return listing(inv.args, { short: 'ldJsVgFrqo:', long: 'list dump json show-size verify show-geometry list-free quiet output= bytes' }, ['-l', '--list', '-d', '--dump', '-J', '--json', '-s', '--show-size', '-V', '--verify', '-g', '--show-geometry', '-F', '--list-free']);
    case 'parted': {
      const reading = readArgs(inv.args, { short: 'lsmjh', long: 'list script machine json help version' });
      if (!reading.ok) return unlisted(reading.why);
      const [device, ...script] = reading.operands.map((w) => w.value);
      if (device === undefined) return reading.options.some((o) => o.name === '-l' || o.name === '--list') ? READS : OTHER;
      // `unit X` only changes how print shows sizes.
      const words = script.filter((w, i) => !(w === 'unit' || script[i - 1] === 'unit'));
      return words.length === 1 && words[0] === 'print' ? READS : OTHER;
    }
    default:
      return OTHER;
  }
}

function listing(args: readonly Word[], table: OptionTable, lists: readonly string[]): Judgement {
  const reading = readArgs(args, table);
  if (!reading.ok) return unlisted(reading.why);
  return reading.options.some((o) => lists.includes(o.name)) ? READS : OTHER;
}

export function judgeStorage(inv: Invocation): Judgement {
  if (['fdisk', 'sfdisk', 'parted'].includes(inv.name ?? '')) return partitionLists(inv);
  if (inv.name === 'gdisk') return inv.args.length === 2 && inv.args[0]?.value === '-l' ? READS : OTHER;
  const table = STORAGE[inv.name ?? ''];
  return table === undefined ? OTHER : byTable(inv.args, table);
}


const noOperands = (operands: readonly Word[]): string | undefined => (operands.length === 0 ? undefined : `${operands[0]?.text ?? ''} is what it would change`);

const MOUNTS: Readonly<Record<string, OptionTable>> = {
  // mount with no device lists mounts (-t only filters the list).
  mount: { short: 'lt:', long: 'show-labels types= help version', operands: noOperands },
  exportfs: { short: 'vs', operands: noOperands },
  swapon: { short: 's', long: 'show=? summary noheadings bytes raw help version', operands: noOperands, together: (o) => (o.length === 0 ? 'swapon alone enables swap' : undefined) },
};

export function judgeMounts(inv: Invocation): Judgement {
  const table = MOUNTS[inv.name ?? ''];
  // Every other option of these tools mounts, exports or enables something: a change, not an unlisted read.
  return table !== undefined && byTable(inv.args, table).kind === 'reads' ? READS : OTHER;
}


const isPid = (v: string): boolean => /^\d+(,\d+)*$/.test(v);
const PROCESS: Readonly<Record<string, OptionTable>> = {
  // -o only to a sink (a file gets the trace). Left out: -u/-E/-b (only for a command it starts: strace is then a wrapper).
  strace: { short: 'fFcCwyYkqrtTvxzZiAnS:e:s:p:a:X:P:I:U:o:', long: 'follow-forks summary-only summary decode-fds=? trace= signal= status= trace-path= attach= string-limit= absolute-timestamps=? relative-timestamps=? syscall-times=? summary-columns= summary-sort-by= output= verbose help', operands: noOperands, values: { '-p': isPid, '-o': isSink, '--output': isSink } },
  ltrace: { short: 'fcSCiLrtTn:s:e:l:x:w:A:D:p:o:', long: 'demangle indent= library= output= help version', operands: noOperands, values: { '-p': isPid, '-o': isSink, '--output': isSink } },
  top: { short: 'bcHiSs1Ed:n:o:O:p:u:U:w::e:', long: 'batch help version', operands: noOperands },
};

export function judgeProcesses(inv: Invocation): Judgement {
  if (inv.name === 'kill') {
    const [first, ...rest] = inv.args.map((w) => w.value);
    return ['-l', '-L', '--list', '--table'].includes(first ?? '') && rest.every((v) => v !== undefined && /^\d+$/.test(v)) ? READS : OTHER;
  }
  const table = PROCESS[inv.name ?? ''];
  if (table === undefined) return OTHER;
  const reading = readArgs(inv.args, table);
  if (!reading.ok) return unlisted(reading.why);
  // strace and ltrace inspect a running process (-p); top reads only in batch mode.
  const needed = inv.name === 'top' ? ['-b', '--batch'] : ['-p'];
  return reading.options.some((o) => needed.includes(o.name)) ? READS : OTHER;
}


// rclone's flags. Left out: --log-file and --dump-* targets, and anything that transfers or deletes.
const RCLONE_FLAGS: OptionTable = {
  short: 'vqRP',
  long: `config= verbose quiet max-depth= recursive fast-list include= exclude= filter= include-from= exclude-from=
    filter-from= files-from= min-size= max-size= min-age= max-age= human-readable json format= separator= dirs-only
    files-only absolute hash= hash-type= csv stat no-modtime no-mimetype original encrypted dir-slash checkers=
    contimeout= timeout= retries= low-level-retries= stats= stats-one-line progress head= tail= offset= count= discard
    one-way size-only download all long help`,
};
const RCLONE: VerbTool = {
  global: RCLONE_FLAGS,
  globalAnywhere: true,
  verbs: {
    ...verbs('ls lsd lsl lsf lsjson size about listremotes version cat tree md5sum sha1sum hashsum help'),
    check: {},
    // rclone config with no action is an interactive editor; these only print.
    config: { maxOperands: 1 },
  },
};

export function judgeRclone(inv: Invocation): Judgement {
  if (inv.name !== 'rclone') return OTHER;
  const judged = judgeVerbs(inv.args, RCLONE);
  if (judged.kind !== 'reads') return judged;
  const words = inv.args.map((w) => w.value);
  const at = words.indexOf('config');
  if (at === -1) return READS;
  const action = words.slice(at + 1).find((w) => w !== undefined && !w.startsWith('-'));
  return ['show', 'file', 'dump', 'providers', 'paths'].includes(action ?? '') ? READS : OTHER;
}
