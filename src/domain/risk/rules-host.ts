// What wrecks a host or a Proxmox cluster without touching a file: deleting or rolling back guests through any
// interface, removing a cluster node, recursive permission changes over the system, killing init, taking the host's
// network or its management services down, writing a disk or a kernel switch directly, powering off.
import type { Invocation } from './args.ts';
import { hasFlag, named, options, positionals, subcommand, values } from './args.ts';
import { deviceWritten } from './devices.ts';
import { ipObject } from './ip.ts';
import type { Rule } from './rule.ts';

// The Proxmox API as pvesh and HTTP see it: a guest is /nodes/N/qemu/ID or /nodes/N/lxc/ID.
const GUEST_PATH = /^\/?nodes\/[^/]+\/(qemu|lxc)\/[^/]+\/?$/;
const ROLLBACK_PATH = /\/snapshot\/[^/]+\/rollback\/?$/;

function apiChange(method: string, path: string): string | undefined {
  if (method === 'delete') return GUEST_PATH.test(path) ? `deletes the guest at ${path} and its disks` : `deletes ${path} through the Proxmox API`;
  if ((method === 'create' || method === 'post') && ROLLBACK_PATH.test(path)) return `rolls the guest back to a snapshot (${path}), discarding what changed since`;
  return undefined;
}

function pveshChange(inv: Invocation): string | undefined {
  if (!named('pvesh')(inv)) return undefined;
  const [verb, path] = positionals(inv);
  return verb === undefined || path === undefined ? undefined : apiChange(verb, path);
}

const CURL_VALUED = 'AbcCdDeEFHKmoPQrtTuUwxXyYz';
const CURL_VALUED_LONG = ['--request', '--data', '--header', '--user', '--output', '--url', '--cookie', '--cacert', '--cert', '--key', '--write-out', '--max-time'];

/** curl or wget calling the Proxmox API (`…:8006/api2/json/…`) with DELETE, or POSTing a rollback. */
function httpApiChange(inv: Invocation): string | undefined {
  if (!named('curl', 'wget', 'http', 'xh')(inv)) return undefined;
  const url = values(inv).find((v) => /\/api2\/(json|extjs)\//.test(v));
  if (url === undefined) return undefined;
  const path = url.replace(/^.*\/api2\/(json|extjs)/, '').replace(/[?#].*$/, '');
  const opts = options(inv, CURL_VALUED, [...CURL_VALUED_LONG, '--method']);
  const explicit = opts.find((o) => ['-X', '--request', '--method'].includes(o.name))?.value?.toLowerCase();
  const posts = opts.some((o) => ['-d', '--data', '--data-raw', '--data-binary', '--post-data'].includes(o.name));
  const httpie = named('http', 'xh')(inv) ? values(inv).find((v) => /^(DELETE|POST)$/i.test(v))?.toLowerCase() : undefined;
  return apiChange(explicit ?? httpie ?? (posts ? 'post' : 'get'), path);
}

function guestChange(inv: Invocation): string | undefined {
  if (!named('qm', 'pct')(inv)) return undefined;
  const sub = subcommand(inv);
  const name = inv.name ?? '';
  if (sub === 'rollback') return `${name} rollback discards everything the guest changed since the snapshot`;
  if (sub === 'delsnapshot') return `${name} delsnapshot deletes a snapshot, and with it the state it could return to`;
  if (sub === 'restore' && hasFlag(inv, '', ['--force'])) return 'pct restore --force overwrites an existing container';
  if (sub === 'disk' && positionals(inv)[1] === 'unlink' && hasFlag(inv, '', ['--force'])) return 'qm disk unlink --force deletes the disk volumes';
  if (sub === 'unlink' && hasFlag(inv, '', ['--force'])) return 'qm unlink --force deletes the disk volumes';
  if (sub === 'set') {
    const deleted = options(inv, '', ['--delete']).find((o) => o.name === '--delete' || o.name === '-delete');
    if (deleted !== undefined && (deleted.value === undefined || /(^|,)unused\d+/.test(deleted.value))) return `${name} set --delete ${deleted.value ?? ''} deletes an unused disk's volume`;
  }
  return undefined;
}

function clusterChange(inv: Invocation): string | undefined {
  if (named('qmrestore')(inv) && hasFlag(inv, '', ['--force'])) return 'qmrestore --force overwrites an existing VM';
  if (!named('pvecm')(inv)) return undefined;
  const sub = subcommand(inv);
  if (sub === 'delnode') return 'pvecm delnode removes a node from the cluster for good';
  if (sub === 'expected') return 'pvecm expected lowers the votes quorum needs, so a partitioned node can write the cluster configuration alone';
  return undefined;
}

/** Paths whose recursive permission change breaks the system (/, /etc, /usr, …, and their contents). */
const SYSTEM_TREES = /^\/(etc|usr|var|bin|sbin|lib|lib64|boot|root|dev|proc|sys|run|home)?(\/\*?)?$/;

function recursivePermissions(inv: Invocation): string | undefined {
  if (!named('chmod', 'chown', 'chgrp', 'setfacl')(inv) || !hasFlag(inv, 'R', ['--recursive'])) return undefined;
  const tree = positionals(inv).find((p) => p !== undefined && SYSTEM_TREES.test(p.replace(/\/\.?$/, '') || '/'));
  return tree === undefined ? undefined : `${inv.name ?? ''} -R over ${tree} changes every file of the system below it; no one list restores them`;
}

const SIGNAL_VALUED = ['-s', '-n', '--signal'];

function killsInit(inv: Invocation): string | undefined {
  if (named('killall5')(inv)) return 'killall5 signals every process on the host';
  if (named('kill')(inv)) {
    if (positionals(inv, SIGNAL_VALUED).includes('1')) return 'kill 1 signals init, which takes the whole host down';
    // After a signal option or `--`, -1 is a process id: every process the caller may signal.
    return values(inv).some((a, i) => a === '-1' && i > 0) ? 'kill -1 signals every process on the host' : undefined;
  }
  if (named('pkill', 'killall')(inv)) {
    const target = positionals(inv, ['-s', '--signal', '-u', '-U', '-g', '-G', '-P', '-t', '-F', '--pidfile', '-n']).find((p) => p !== undefined && CRITICAL_PROCESSES.test(p));
    return target === undefined ? undefined : `${inv.name ?? ''} ${target} kills a process the host or the cluster cannot run without`;
  }
  return undefined;
}

const CRITICAL_PROCESSES = /^(systemd|init|sshd|pmxcfs|corosync|pveproxy|pvedaemon|pve-cluster|dbus-daemon|systemd-journald|systemd-networkd|NetworkManager)$/;
const CRITICAL_UNITS = /^(pve-cluster|pveproxy|pvedaemon|pvestatd|corosync|sshd?|networking|systemd-networkd|NetworkManager|pve-ha-lrm|pve-ha-crm|dbus|systemd-journald)(\.service|\.socket)?$/;

function stopsCriticalService(inv: Invocation): string | undefined {
  if (named('systemctl')(inv)) {
    const [verb, ...units] = positionals(inv, ['-H', '--host', '-M', '--machine', '-p', '--property', '-t', '--type', '-s', '--signal', '--kill-whom']);
    if (['isolate', 'rescue', 'emergency'].includes(verb ?? '')) return `systemctl ${verb ?? ''} stops every service that is not part of the target`;
    const unit = units.find((u) => u === undefined || CRITICAL_UNITS.test(u));
    if (['stop', 'disable', 'mask', 'kill'].includes(verb ?? '') && units.length > 0 && (unit !== undefined || units.includes(undefined))) {
      return `systemctl ${verb ?? ''} ${unit ?? '(a unit only known at run time)'} takes down a service the host's management or the cluster depends on`;
    }
    return undefined;
  }
  if (named('service')(inv)) {
    const [unit, action] = positionals(inv);
    return unit !== undefined && CRITICAL_UNITS.test(unit) && action === 'stop' ? `service ${unit} stop takes down a service the host's management depends on` : undefined;
  }
  return undefined;
}

/** Interfaces that carry the host's own traffic or its guests': a bridge, a bond or a physical uplink. */
const UPLINK = /^(vmbr|br|bond|eno|ens|enp|eth|enx|wlan|wlp|team)\w*/;

function cutsNetwork(inv: Invocation): string | undefined {
  if (named('ifdown')(inv)) return 'ifdown takes an interface down, cutting off what reaches the host or its guests through it';
  if (!named('ip')(inv)) return undefined;
  const words = positionals(inv, ['-n', '-netns', '-f', '-family']).map((w) => w ?? '');
  const [objectWord, verb, ...rest] = words;
  const object = ipObject(objectWord ?? '');
  const device = rest.find((w) => w !== 'dev' && !['down', 'up', 'set'].includes(w)) ?? '';
  const uplink = UPLINK.test(device) || device === '';
  if (object === 'link' && verb !== undefined && 'set'.startsWith(verb) && rest.includes('down') && uplink) return `ip link set ${device} down takes the host's bridge or uplink down, cutting the operator off`;
  if (object === 'link' && verb !== undefined && verb.length > 0 && 'delete'.startsWith(verb) && uplink) return `ip link delete ${device} removes the host's bridge or uplink, cutting the operator off`;
  if (object === 'address' && verb !== undefined && verb.length > 0 && 'flush'.startsWith(verb) && uplink) return `ip address flush ${device} removes the host's addresses, cutting the operator off`;
  return undefined;
}

const POWER_VERBS = ['reboot', 'poweroff', 'halt', 'kexec', 'soft-reboot'];

function powerOff(inv: Invocation): string | undefined {
  if (named('shutdown')(inv) && hasFlag(inv, 'ck', ['--cancel', '--show'])) return undefined;
  const systemctl = named('systemctl')(inv) && POWER_VERBS.includes(subcommand(inv) ?? '');
  if (!systemctl && !named('reboot', 'shutdown', 'poweroff', 'halt')(inv)) return undefined;
  return `${inv.text} stops every guest and service on the host, and a host that does not come back is out of reach`;
}

export const DEVICE_WRITE_RULE: Rule = {
    id: 'device-write',
    class: 'destructive',
    reason: 'writes a disk, memory or kernel switch directly: data below the file system is overwritten, or the kernel acts at once',
    examples: ['cat x > /dev/sda', 'echo c > /proc/sysrq-trigger', 'echo x | sudo tee /dev/nvme0n1', 'cp disk.img /dev/vdb', 'echo 1 > /sys/block/sdb/device/delete', 'echo mem > /sys/power/state', 'echo 1 > /proc/sys/kernel/panic', "sh -c 'cat img >> /dev/mapper/pve-root'", 'cat x >/dev/disk/by-id/ata-X', 'echo x > /dev/$DISK'],
    match: (inv) => deviceWritten(inv) !== undefined,
    detail: deviceWritten,
};

export const HOST_RULES: readonly Rule[] = [
  DEVICE_WRITE_RULE,
  {
    id: 'guest-delete-api',
    class: 'destructive',
    reason: 'deletes Proxmox objects or rolls a guest back through the API',
    examples: ['pvesh delete /nodes/pve/qemu/100', 'pvesh delete /nodes/pve/lxc/132', 'pvesh delete /storage/local-zfs', 'pvesh create /nodes/pve/qemu/100/snapshot/s1/rollback', "curl -k -X DELETE -H 'Authorization: PVEAPIToken=x' https://pve:8006/api2/json/nodes/pve/qemu/100"],
    match: (inv) => (pveshChange(inv) ?? httpApiChange(inv)) !== undefined,
    detail: (inv) => pveshChange(inv) ?? httpApiChange(inv),
  },
  {
    id: 'guest-rollback',
    class: 'destructive',
    reason: 'rolls back a guest, deletes its snapshot or disk volumes, or overwrites it from a backup',
    examples: ['qm rollback 100 snap1', 'pct rollback 132 before-upgrade', 'qm delsnapshot 100 s1', 'qm disk unlink 100 --idlist scsi1 --force', 'qm set 100 --delete unused0', 'pct restore 132 /var/lib/vz/dump/x.tar.zst --force', 'qmrestore /var/lib/vz/dump/x.vma.zst 100 --force'],
    match: (inv) => (guestChange(inv) ?? clusterChange(inv)) !== undefined && !named('pvecm')(inv),
    detail: (inv) => guestChange(inv) ?? clusterChange(inv),
  },
  {
    id: 'cluster-node-remove',
    class: 'destructive',
    reason: 'removes a node from the Proxmox cluster or overrides its quorum',
    examples: ['pvecm delnode pve2', 'pvecm expected 1'],
    match: (inv) => named('pvecm')(inv) && clusterChange(inv) !== undefined,
    detail: clusterChange,
  },
  {
    id: 'recursive-permissions-system',
    class: 'destructive',
    reason: 'changes ownership or permissions of the whole system tree',
    examples: ['chmod -R 777 /', 'chown -R nobody /etc', 'chmod --recursive a+w /usr/', 'chgrp -R users /var', 'sudo chmod -Rv 700 /root/*'],
    match: (inv) => recursivePermissions(inv) !== undefined,
    detail: recursivePermissions,
  },
  {
    id: 'crontab-remove',
    class: 'destructive',
    reason: "crontab -r deletes the user's whole crontab; no copy is kept",
    examples: ['crontab -r', 'crontab -u root -r', 'crontab -ir'],
    match: (inv) => named('crontab')(inv) && values(inv).some((v) => /^-[^-]*r/.test(v)),
  },
  {
    id: 'kill-init',
    class: 'destructive',
    reason: 'kills init, every process, or a process the host cannot run without',
    examples: ['kill -9 1', 'kill 1', 'kill -KILL -1', 'kill -s KILL 1', 'pkill -9 systemd', 'killall5', 'killall pmxcfs'],
    match: (inv) => killsInit(inv) !== undefined,
    detail: killsInit,
  },
  {
    id: 'network-cut',
    class: 'destructive',
    reason: "takes the host's network down",
    examples: ['ifdown vmbr0', 'ifdown -a', 'ip link set vmbr0 down', 'ip l s eno1 down', 'ip link set dev bond0 down', 'ip link del vmbr1', 'ip addr flush dev vmbr0'],
    match: (inv) => cutsNetwork(inv) !== undefined,
    detail: cutsNetwork,
  },
  {
    id: 'critical-service-stop',
    class: 'destructive',
    reason: "stops the host's management, cluster or remote access services",
    examples: ['systemctl stop pve-cluster', 'systemctl disable --now sshd', 'systemctl mask corosync.service', 'systemctl stop networking', 'service ssh stop', 'systemctl isolate rescue.target'],
    match: (inv) => stopsCriticalService(inv) !== undefined,
    detail: stopsCriticalService,
  },
  {
    id: 'power-state',
    class: 'destructive',
    reason: 'reboots or powers off the machine',
    examples: ['reboot', 'shutdown -r now', 'poweroff', 'halt -p', 'systemctl reboot', 'sudo shutdown -h +5'],
    match: (inv) => powerOff(inv) !== undefined,
  },
];

