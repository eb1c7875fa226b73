// Read-only forms of service, container, ZFS and Proxmox tools: the sub-commands that only show state and the
// options each may take. A sub-command that sets what it would show when given more operands (resolvectl dns IF
// ADDR, hostnamectl hostname NAME) reads only up to the operands that name what to show.
import type { Invocation } from './args.ts';
import { isComposeTool } from './docker.ts';
import type { Judgement } from './judgement.ts';
import { OTHER, READS, byTable } from './judgement.ts';
import type { OptionTable } from './option-table.ts';
import type { VerbTool } from './subcommands.ts';
import { judgeVerbs, verbs } from './subcommands.ts';

// Left out: -H/--host (runs ssh), --runtime, --now, --force and everything that only matters when changing things.
const SYSTEMD_GLOBAL: OptionTable = {
  short: 'at:p:Pln:o:qrM:h',
  long: `all type= property= value state= lines= output= no-pager no-legend plain quiet recursive reverse after before
    with-dependencies machine= user system global failed show-types timestamp= full no-ask-password firmware-setup=?
    json= legend= help version`,
};

const SYSTEMD: Readonly<Record<string, VerbTool>> = {
  systemctl: {
    global: SYSTEMD_GLOBAL,
    bare: 'reads',
    globalAnywhere: true,
    verbs: verbs(`status show cat help get-default show-environment list-units list-unit-files list-sockets list-timers
      list-jobs list-dependencies list-machines list-paths list-automounts is-active is-enabled is-failed
      is-system-running`),
  },
  hostnamectl: {
    global: SYSTEMD_GLOBAL,
    bare: 'reads',
    globalAnywhere: true,
    verbs: { ...verbs('status show'), ...verbs('hostname icon-name chassis deployment location', { maxOperands: 0 }) },
  },
  timedatectl: { global: SYSTEMD_GLOBAL, bare: 'reads', globalAnywhere: true, verbs: verbs('status show list-timezones timesync-status show-timesync') },
  localectl: {
    global: SYSTEMD_GLOBAL,
    bare: 'reads',
    globalAnywhere: true,
    verbs: verbs('status list-locales list-keymaps list-x11-keymap-models list-x11-keymap-layouts list-x11-keymap-variants list-x11-keymap-options'),
  },
  loginctl: {
    global: SYSTEMD_GLOBAL,
    bare: 'reads',
    globalAnywhere: true,
    verbs: verbs('list-sessions session-status show-session list-users user-status show-user list-seats seat-status show-seat'),
  },
  networkctl: { global: SYSTEMD_GLOBAL, bare: 'reads', globalAnywhere: true, verbs: verbs('list status lldp label') },
  // With only the link (or nothing) these show; with a value they set it. revert, flush-caches and reset-* act.
  resolvectl: {
    global: { ...SYSTEMD_GLOBAL, short: `${SYSTEMD_GLOBAL.short ?? ''}46i:t:c:p:`, long: `${SYSTEMD_GLOBAL.long ?? ''} interface= protocol= class= cname= search= raw=? legend= validate= synthesize= cache= zone= trust-anchor= network= stale-data= relax-single-label=` },
    bare: 'reads',
    globalAnywhere: true,
    verbs: {
      ...verbs('query service openpgp tlsa status statistics show-cache show-server-state monitor'),
      ...verbs('dns domain default-route llmnr mdns dnssec dnsovertls nta', { maxOperands: 1 }),
      ...verbs('log-level', { maxOperands: 0 }),
    },
  },
};

/** systemd-resolve, resolvectl's older name, takes its actions as options: only these show. */
const SYSTEMD_RESOLVE: OptionTable = {
  short: '46i:t:c:p:h',
  long: 'status statistics interface= type= class= protocol= service openpgp tlsa=? cname= search= raw=? legend= no-pager help version',
};

// systemd-analyze's reports. Left out: verify (loads unit files and may run their generators), log-level,
// log-target and service-watchdogs with a value (they set them), and --man/--generators.
const SYSTEMD_ANALYZE: VerbTool = {
  global: { short: 'qhHM:', long: 'no-pager system user global json= order require fuzz= from-pattern= to-pattern= iterations= base-time= quiet no-legend offline= threshold= host= machine= help version' },
  bare: 'reads',
  globalAnywhere: true,
  verbs: {
    ...verbs(`time blame critical-chain dump cat-config unit-files unit-paths exit-status capability syscall-filter filesystems
      calendar timestamp timespan security plot dot condition compare-versions`),
    ...verbs('log-level log-target service-watchdogs', { maxOperands: 0 }),
  },
};

export function judgeSystemd(inv: Invocation): Judgement {
  if (inv.name === 'systemd-analyze') return judgeVerbs(inv.args, SYSTEMD_ANALYZE);
  const name = inv.name ?? '';
  if (name === 'service') return inv.args.length === 2 && inv.args[1]?.value === 'status' && inv.args[0]?.value !== undefined ? READS : OTHER;
  if (name === 'systemd-resolve') return byTable(inv.args, SYSTEMD_RESOLVE);
  const tool = SYSTEMD[name];
  return tool === undefined ? OTHER : judgeVerbs(inv.args, tool);
}


// docker's global options. Left out: --config (its directory holds plugins and credential helpers that run).
const DOCKER_GLOBAL: OptionTable = { short: 'H:c:l:Dv', long: 'host= context= log-level= debug tls tlsverify tlscacert= tlscert= tlskey= version help' };
const FORMAT: OptionTable = { short: 'f:', long: 'format= help' };
const LIST: OptionTable = { short: 'aqf:sn:l', long: 'all quiet filter= format= no-trunc size last= latest digests tree help' };
const LOGS: OptionTable = { short: 'fn:t', long: 'follow tail= since= until= timestamps details help' };
const INSPECT: OptionTable = { short: 'f:s', long: 'format= size type= help' };
const STATS: OptionTable = { short: 'a', long: 'all no-stream no-trunc format= help' };
const EVENTS: OptionTable = { short: 'f:', long: 'since= until= filter= format= help' };
const HISTORY: OptionTable = { short: 'Hq', long: 'human=? quiet no-trunc format= help' };

const DOCKER_VERBS = {
  ps: { table: LIST }, images: { table: LIST }, logs: { table: LOGS }, inspect: { table: INSPECT }, stats: { table: STATS },
  version: { table: FORMAT }, info: { table: FORMAT }, port: {}, diff: {}, history: { table: HISTORY }, events: { table: EVENTS },
  search: { table: { short: 'f:', long: 'limit= filter= format= no-trunc help' } },
  // docker top passes the words after the container to ps, which only reads.
  top: { table: { freeForm: true, everyOptionReads: true } },
};

const DOCKER_GROUPS: Readonly<Record<string, Readonly<Record<string, { table?: OptionTable }>>>> = {
  container: { ls: { table: LIST }, list: { table: LIST }, ps: { table: LIST }, inspect: { table: INSPECT }, logs: { table: LOGS }, top: DOCKER_VERBS.top, port: {}, stats: { table: STATS }, diff: {} },
  image: { ls: { table: LIST }, list: { table: LIST }, inspect: { table: INSPECT }, history: { table: HISTORY } },
  volume: { ls: { table: LIST }, list: { table: LIST }, inspect: { table: INSPECT } },
  network: { ls: { table: LIST }, list: { table: LIST }, inspect: { table: INSPECT } },
  system: { df: { table: { short: 'v', long: 'verbose format= help' } }, info: { table: FORMAT }, events: { table: EVENTS } },
  context: { ls: { table: LIST }, list: { table: LIST }, inspect: { table: INSPECT }, show: {} },
};

// Left out of compose config: -o/--output (writes the result into a file).
const COMPOSE_GLOBAL: OptionTable = { short: 'f:p:', long: 'file= project-name= project-directory= env-file= profile= ansi= progress= compatibility parallel= help' };
const COMPOSE_VERBS = {
  ps: { table: { short: 'aq', long: 'all quiet services filter= format= status= no-trunc orphans help' } },
  logs: { table: { short: 'fn:t', long: 'follow tail= since= until= timestamps no-color no-log-prefix index= help' } },
  config: { table: { short: 'q', long: 'quiet services volumes profiles images hash= format= no-interpolate no-normalize no-path-resolution no-consistency variables environment help' } },
  ls: { table: { short: 'aq', long: 'all quiet filter= format= help' } },
  images: { table: { short: 'q', long: 'quiet format= help' } },
  top: {},
  version: { table: { short: 'f:', long: 'format= short help' } },
  port: { table: { long: 'index= protocol= help' } },
};

export function judgeDocker(inv: Invocation): Judgement {
  if (isComposeTool(inv)) return judgeVerbs(inv.args, { global: COMPOSE_GLOBAL, verbs: COMPOSE_VERBS });
  const global = judgeVerbs(inv.args, { global: DOCKER_GLOBAL, verbs: DOCKER_VERBS });
  if (global.kind !== 'other') return global;
  const groups: Record<string, VerbTool['verbs']> = { ...DOCKER_GROUPS };
  const at = inv.args.findIndex((w) => w.value !== undefined && (w.value in groups || w.value === 'compose'));
  const group = inv.args[at]?.value;
  if (at === -1 || group === undefined) return OTHER;
  const before = judgeVerbs(inv.args.slice(0, at), { global: DOCKER_GLOBAL, verbs: {}, bare: 'reads' });
  if (before.kind !== 'reads') return before;
  const rest = inv.args.slice(at + 1);
  if (group === 'compose') return judgeVerbs(rest, { global: COMPOSE_GLOBAL, verbs: COMPOSE_VERBS });
  return judgeVerbs(rest, { global: {}, verbs: groups[group] ?? {} });
}

const ZFS_LIST: OptionTable = { short: 'Hprd:o:s:S:t:', long: 'json json-int help' };
const ZFS: VerbTool = {
  global: { short: '?', long: 'help version' },
  bare: 'reads',
  verbs: {
    list: { table: ZFS_LIST },
    get: { table: { short: 'Hprd:o:s:t:', long: 'json json-int' } },
    holds: { table: { short: 'rHp' } },
    diff: { table: { short: 'FHth' } },
    ...verbs('userspace groupspace projectspace', { table: { short: 'Hinpo:s:S:t:' } }),
    // zfs send writes the stream to its output (a pipe into zfs recv is judged there); -n is a dry run.
    send: { table: { short: 'DLRbcehnpPvwsI:i:t:S', long: 'dedup large-block replicate backup compressed embed holds dryrun parsable props verbose raw skip-missing saved redact=' } },
    version: { table: { short: 'j', long: 'json' } },
  },
};
const ZPOOL: VerbTool = {
  global: { short: '?', long: 'help version' },
  bare: 'reads',
  verbs: {
    list: { table: { short: 'gHLpPvo:T:', long: 'json json-int json-pool-key-guid' } },
    status: { table: { short: 'cDegiLpPstTvx:', long: 'json json-int json-flat-vdevs json-pool-key-guid power' } },
    get: { table: { short: 'Hpo:', long: 'json json-int' } },
    iostat: { table: { short: 'c:gHLlpPqrT:vwy', long: 'json' } },
    history: { table: { short: 'il' } },
    // Left out: -c (clears the events).
    events: { table: { short: 'vHf' } },
    version: { table: { short: 'j', long: 'json' } },
    // With no pool named, zpool import only lists the pools that could be imported.
    import: { table: { short: 'd:Ds' }, maxOperands: 0 },
  },
};

export function judgeZfs(inv: Invocation): Judgement {
  if (inv.name === 'zfs') return judgeVerbs(inv.args, ZFS);
  if (inv.name === 'zpool') return judgeVerbs(inv.args, ZPOOL);
  return OTHER;
}

// Proxmox's tools take Getopt::Long options with one dash or two.
const pve = (names: string): OptionTable => ({ long: `${names} help`, words: `${names} help` });
const GUEST = {
  ...verbs('list', { table: pve('full') }),
  ...verbs('status', { table: pve('verbose') }),
  ...verbs('config', { table: pve('current snapshot=') }),
  ...verbs('pending listsnapshot df cpusets help', { table: pve('verbose') }),
};
const PROXMOX: Readonly<Record<string, VerbTool>> = {
  pct: { global: {}, verbs: GUEST },
  qm: { global: {}, verbs: { ...GUEST, showcmd: { table: pve('pretty snapshot=') } } },
  pvesm: {
    global: {},
    verbs: {
      status: { table: pve('content= enabled format storage= target=') },
      list: { table: pve('content= vmid=') },
      path: {},
      scan: { table: pve('server= username= password= domain=') },
      help: {},
    },
  },
  pvesh: { global: {}, verbs: { ...verbs('get ls', { table: pve('output-format= noborder noheader human-readable quiet') }), usage: { table: pve('verbose returns command=') }, help: {} } },
  pvecm: { global: {}, verbs: verbs('status nodes help') },
  'ha-manager': { global: {}, verbs: { status: { table: pve('verbose') }, config: { table: pve('type=') }, help: {} } },
  pveversion: { global: { ...pve('verbose'), short: 'v' }, verbs: {}, bare: 'reads' },
};

// qm guest cmd ID <command>: the guest agent's get-*/info/ping queries only read.
const AGENT_READS = /^(get-.*|info|ping|network-get-interfaces|fsinfo)$/;

export function judgeProxmox(inv: Invocation): Judgement {
  const tool = PROXMOX[inv.name ?? ''];
  if (tool === undefined) return OTHER;
  const [first, second, vmid, command, ...rest] = inv.args.map((w) => w.value);
  if (inv.name === 'qm' && first === 'guest' && second === 'cmd') return vmid !== undefined && rest.length === 0 && AGENT_READS.test(command ?? '') ? READS : OTHER;
  return judgeVerbs(inv.args, tool);
}

