// The read-only allowlist: commands and sub-commands that change nothing. Anything not here is at least a mutation.
import type { Invocation } from './args.ts';
import { hasFlag, named, positionals, subcommand, values } from './args.ts';
import { DOCKER_VALUED, isComposeTool, isContainerTool } from './docker.ts';
import { onlyAsksVersion } from './interpreters.ts';
import { FIREWALL_READ_RULE } from './rules-firewall.ts';
import { hiddenInSql, isDestructiveSql, sqlOf } from './sql.ts';
import type { Rule } from './rule.ts';

const oneOf = (value: string | undefined, allowed: readonly string[]): boolean => value !== undefined && allowed.includes(value);

const SYSTEMD_READ = ['status', 'show', 'cat', 'help', 'get-default', 'show-environment', 'list', 'query', 'statistics', 'dns', 'domain'];
const SYSTEMCTL_VALUED = ['-t', '--type', '-p', '--property', '-H', '--host', '-M', '--machine', '-n', '--lines', '-o', '--output', '--state', '-s', '--signal'];

const DOCKER_READ = ['ps', 'logs', 'inspect', 'images', 'stats', 'version', 'info', 'top', 'port', 'diff', 'history', 'events', 'search'];
const DOCKER_GROUP_READ: Readonly<Record<string, readonly string[]>> = {
  container: ['ls', 'list', 'ps', 'inspect', 'logs', 'top', 'port', 'stats', 'diff'],
  image: ['ls', 'list', 'inspect', 'history'],
  volume: ['ls', 'list', 'inspect'],
  network: ['ls', 'list', 'inspect'],
  system: ['df', 'info', 'events'],
  compose: ['ps', 'logs', 'config', 'ls', 'images', 'top', 'version', 'port'],
  context: ['ls', 'list', 'inspect', 'show'],
};

function dockerReads(inv: Invocation): boolean {
  const [first, second] = positionals(inv, DOCKER_VALUED);
  if (isComposeTool(inv)) return oneOf(first, DOCKER_GROUP_READ.compose ?? []);
  if (first === undefined) return false;
  const group = DOCKER_GROUP_READ[first];
  return DOCKER_READ.includes(first) || (group !== undefined && oneOf(second, group));
}

const PROXMOX_READ: Readonly<Record<string, readonly string[]>> = {
  pct: ['list', 'status', 'config', 'df', 'pending', 'listsnapshot', 'cpusets', 'help'],
  qm: ['list', 'status', 'config', 'pending', 'listsnapshot', 'showcmd', 'help'],
  pvesm: ['status', 'list', 'path', 'scan', 'help'],
  pvesh: ['get', 'ls', 'usage', 'help'],
  pvecm: ['status', 'nodes', 'help'],
  'ha-manager': ['status', 'config', 'help'],
};

function proxmoxReads(inv: Invocation): boolean {
  if (named('pveversion')(inv)) return true;
  const read = inv.name === undefined ? undefined : PROXMOX_READ[inv.name];
  const [first, second, , agentCommand] = positionals(inv);
  if (read === undefined) return false;
  // qm guest cmd ID <command>: the guest agent's get-*/info/ping queries only read.
  if (inv.name === 'qm' && first === 'guest' && second === 'cmd') return /^(get-.*|info|ping|network-get-interfaces|fsinfo)$/.test(agentCommand ?? '');
  return oneOf(first, read);
}

const ZFS_READ = ['list', 'get', 'holds', 'diff', 'userspace', 'groupspace', 'projectspace', 'send', 'version'];
const ZPOOL_READ = ['list', 'status', 'get', 'iostat', 'history', 'events', 'version', 'import-list'];

const APT_READ = ['list', 'show', 'policy', 'search', 'depends', 'rdepends', 'madison', 'showsrc', 'help'];
const DPKG_READ_FLAGS = ['-l', '--list', '-s', '--status', '-L', '--listfiles', '-S', '--search', '-p', '--print-avail', '--get-selections', '--print-architecture', '--print-foreign-architectures', '--compare-versions', '--audit', '-C', '--version'];

function packagesRead(inv: Invocation): boolean {
  if (named('apt-cache', 'dpkg-query', 'apt-config')(inv)) return true;
  if (named('apt')(inv)) return oneOf(subcommand(inv), APT_READ);
  if (named('apt-get')(inv)) return hasFlag(inv, 's', ['--simulate', '--dry-run', '--just-print', '--no-act', '--recon']);
  if (named('dpkg')(inv)) {
    const [first] = values(inv);
    return first !== undefined && DPKG_READ_FLAGS.includes(first);
  }
  if (named('apt-mark')(inv)) return (subcommand(inv) ?? '').startsWith('show');
  return false;
}

const GIT_READ = ['status', 'log', 'diff', 'show', 'rev-parse', 'ls-files', 'ls-tree', 'ls-remote', 'blame', 'describe', 'shortlog', 'cat-file', 'grep', 'reflog', 'version', 'help'];

function gitReads(inv: Invocation): boolean {
  const [sub, ...rest] = positionals(inv, ['-C', '-c']);
  const args = values(inv);
  if (oneOf(sub, GIT_READ)) return true;
  if (sub === 'branch' || sub === 'tag') return rest.length === 0 && !hasFlag(inv, 'dDmMcC', ['--delete', '--move', '--copy', '--set-upstream-to', '--unset-upstream', '--edit-description']);
  if (sub === 'remote') return rest.length === 0 || rest[0] === 'show' || rest[0] === 'get-url';
  if (sub === 'config') return args.some((a) => ['--get', '--get-all', '--list', '-l', '--get-regexp'].includes(a));
  if (sub === 'stash') return rest[0] === 'list' || rest[0] === 'show';
  return false;
}

const RCLONE_READ = ['ls', 'lsd', 'lsl', 'lsf', 'lsjson', 'size', 'about', 'listremotes', 'version', 'check', 'cat', 'tree', 'md5sum', 'sha1sum', 'hashsum', 'help', 'config'];

function rcloneReads(inv: Invocation): boolean {
  const [sub, action] = positionals(inv, ['--config', '--log-file', '--log-level']);
  if (sub === 'config') return action === undefined || action === 'show' || action === 'file' || action === 'dump' || action === 'providers';
  return oneOf(sub, RCLONE_READ);
}

const SQL_READ = /^\s*(SELECT|SHOW|EXPLAIN(?!\s+ANALYZE)|\\[dlx]\S*|\\conninfo|TABLE\s|\.(tables|schema|indexes|indices|databases|dbinfo)\b)/i;

function databaseReads(inv: Invocation): boolean {
  if (named('redis-cli')(inv)) {
    const command = positionals(inv, ['-h', '-p', '-a', '-n', '-u', '-s', '--user', '--pass', '-r', '-i', '-d'])[0];
    return /^(get|mget|info|ping|keys|scan|ttl|pttl|type|exists|dbsize|hget|hgetall|hkeys|hlen|llen|lrange|scard|smembers|zrange|zcard|strlen|memory|slowlog|client|time|lastsave|role)$/i.test(command ?? '');
  }
  const sql = sqlOf(inv);
  if (sql === undefined) return false;
  if (sql.length === 0) return named('psql')(inv) && hasFlag(inv, 'l', ['--list']);
  return sql.every((s) => s !== undefined && !isDestructiveSql(s) && hiddenInSql(s) === undefined && s.split(';').every((part) => part.trim() === '' || SQL_READ.test(part)));
}

function ipReads(inv: Invocation): boolean {
  const [, command] = positionals(inv, ['-n', '-netns', '-f', '-family', '-b', '-batch']);
  if (values(inv).some((v) => ['-b', '-batch', '-force'].includes(v))) return false;
  return command === undefined || /^(show|sh|s|list|lst|ls|l|get|g)$/.test(command);
}

function partitionsRead(inv: Invocation): boolean {
  const args = values(inv);
  if (named('lsblk', 'blkid', 'pvs', 'vgs', 'lvs', 'pvdisplay', 'vgdisplay', 'lvdisplay', 'lvmdiskscan')(inv)) return true;
  if (named('wipefs')(inv)) return true;
  if (named('parted')(inv)) return hasFlag(inv, 'l', ['--list']) || args.at(-1) === 'print';
  if (named('fdisk', 'sfdisk', 'sgdisk', 'gdisk')(inv)) return true;
  if (named('smartctl')(inv)) return hasFlag(inv, 'aixHAlcg', ['--all', '--xall', '--info', '--health', '--attributes', '--log', '--scan', '--scan-open', '--capabilities', '--get']) && !hasFlag(inv, 'tXso', ['--test', '--abort', '--smart', '--offlineauto', '--saveauto', '--set']);
  return false;
}

/** Tools that only read, whatever their options (none of their options writes a file). */
const READ_ONLY_TOOLS = [
  'ls', 'cat', 'head', 'tail', 'less', 'more', 'grep', 'egrep', 'fgrep', 'zgrep', 'rg', 'stat', 'df', 'du', 'free', 'uptime',
  'uname', 'whoami', 'id', 'groups', 'ps', 'pgrep', 'pidof', 'lsof', 'ss', 'netstat', 'dig', 'host', 'nslookup', 'findmnt',
  'showmount', 'echo', 'printf', 'true', 'false', 'test', '[', ':', 'sleep', 'which', 'type', 'whereis', 'wc', 'sort',
  'uniq', 'cut', 'tr', 'jq', 'diff', 'cmp', 'comm', 'md5sum', 'sha1sum', 'sha256sum', 'sha512sum', 'b2sum', 'cksum', 'file',
  'readlink', 'realpath', 'basename', 'dirname', 'pwd', 'column', 'nl', 'tac', 'rev', 'od', 'hexdump', 'strings', 'zcat',
  'bzcat', 'xzcat', 'zstdcat', 'lscpu', 'lsmem', 'lspci', 'lsusb', 'lsmod', 'modinfo', 'vmstat', 'iostat', 'mpstat', 'nproc',
  'arch', 'tty', 'last', 'lastlog', 'w', 'who', 'users', 'getent', 'printenv', 'locale', 'seq', 'expr', 'base64', 'nice',
  'fold', 'fmt', 'paste', 'join', 'expand', 'tree', 'traceroute', 'tracepath', 'sensors', 'journalctl', 'dmesg', 'date',
  'hostname', 'sed', 'awk', 'gawk', 'mawk', 'find', 'dd', 'tee', 'ping', 'ping6', 'curl', 'wget',
  'numfmt', 'getfacl', 'lsattr', 'namei', 'systemd-analyze', 'env',
];

/** Tools whose --version is known to print and exit (for interpreters see interpreters.ts). */
const VERSION_TOOLS = ['psql', 'mysql', 'mariadb', 'sqlite3', 'redis-cli', 'mongosh', 'docker', 'podman', 'nerdctl', 'nft', 'iptables', 'ufw', 'firewall-cmd', 'sed', 'awk', 'gawk'];

export const READ_RULES: readonly Rule[] = [
  FIREWALL_READ_RULE,
  {
    id: 'version-query',
    class: 'reversible_low',
    reason: 'only prints its version or help',
    examples: ['python3 --version', 'perl -v', 'node --version', 'php -v', 'psql --version', 'docker --version'],
    match: (inv) => onlyAsksVersion(inv) || (named(...VERSION_TOOLS)(inv) && inv.args.length === 1 && oneOf(inv.args[0]?.value, ['--version', '-V', '-version'])),
  },
  {
    id: 'systemd-read',
    class: 'reversible_low',
    reason: 'only shows service state',
    examples: [
      'pct exec 132 -- systemctl status rclone-backup.timer',
      'pct exec 132 systemctl status x',
      'systemctl is-active nfs-server',
      'systemctl list-timers --all',
      'systemctl --no-pager show -p ActiveState x',
      'systemctl cat rclone-backup.service',
      'service nginx status',
      'timedatectl',
    ],
    match: (inv) => {
      if (named('service')(inv)) return positionals(inv)[1] === 'status';
      if (!named('systemctl', 'hostnamectl', 'timedatectl', 'localectl', 'loginctl', 'networkctl', 'resolvectl')(inv)) return false;
      const sub = subcommand(inv, SYSTEMCTL_VALUED);
      return sub === undefined || SYSTEMD_READ.includes(sub) || /^(is-|list-)/.test(sub);
    },
  },
  {
    id: 'docker-read',
    class: 'reversible_low',
    reason: 'only shows containers, images or compose state',
    examples: ['docker ps -a', 'docker logs --tail 100 netbird-mgmt', 'docker inspect x', 'docker compose ps', 'docker compose logs -f web', 'docker stats --no-stream', 'docker volume ls', 'podman ps -a'],
    match: (inv) => isContainerTool(inv) && dockerReads(inv),
  },
  {
    id: 'zfs-read',
    class: 'reversible_low',
    reason: 'only reads ZFS state',
    examples: ['zfs list -t snapshot', 'zpool status -v', 'zfs get compression tank', 'zpool iostat 5 3', 'zpool list'],
    match: (inv) =>
      (named('zfs')(inv) && oneOf(subcommand(inv, ['-o', '-t', '-s', '-S', '-d']), ZFS_READ)) ||
      (named('zpool')(inv) && oneOf(subcommand(inv), ZPOOL_READ)),
  },
  {
    id: 'proxmox-read',
    class: 'reversible_low',
    reason: 'only reads Proxmox guest, storage or cluster state',
    examples: ['pct list', 'pct config 132', 'pct df 132', 'qm status 101', 'qm config 101', 'pvesm status', 'pveversion -v', 'pvesh get /nodes', 'qm guest cmd 101 get-osinfo'],
    match: proxmoxReads,
  },
  {
    id: 'package-read',
    class: 'reversible_low',
    reason: 'only queries the package database',
    examples: ['apt list --upgradable', 'apt show nginx', 'apt policy zfsutils-linux', 'apt-cache policy docker-ce', 'dpkg -l', 'dpkg -L nfs-kernel-server', 'apt-get -s upgrade'],
    match: packagesRead,
  },
  {
    id: 'git-read',
    class: 'reversible_low',
    reason: 'only reads the repository',
    examples: ['git status', 'git log --oneline -5', 'git -C /opt/app diff', 'git branch', 'git remote -v'],
    match: (inv) => named('git')(inv) && gitReads(inv),
  },
  {
    id: 'rclone-read',
    class: 'reversible_low',
    reason: 'only lists or checks remote files',
    examples: ['rclone lsd b2:', 'rclone size b2:media', 'rclone listremotes', 'rclone config show'],
    match: (inv) => named('rclone')(inv) && rcloneReads(inv),
  },
  {
    id: 'database-read',
    class: 'reversible_low',
    reason: 'only runs queries that read',
    examples: ["psql -c 'SELECT count(*) FROM events'", 'psql -l', 'redis-cli INFO', "mysql -e 'SHOW DATABASES'", "sqlite3 app.db '.tables'", "psql <<'EOF'\nSELECT 1;\nEOF"],
    match: databaseReads,
  },
  {
    id: 'network-read',
    class: 'reversible_low',
    reason: 'only shows addresses, routes or links',
    examples: ['ip addr', 'ip -br a', 'ip route show', 'ip link show eth0', 'ip r get 1.1.1.1'],
    match: (inv) => named('ip')(inv) && ipReads(inv),
  },
  {
    id: 'storage-read',
    class: 'reversible_low',
    reason: 'only lists disks, partitions, volumes or their health',
    examples: ['lsblk -f', 'blkid', 'fdisk -l', 'sgdisk -p /dev/sda', 'parted -l', 'wipefs /dev/sdb', 'lvs', 'smartctl -a /dev/sda'],
    match: partitionsRead,
  },
  {
    id: 'mount-read',
    class: 'reversible_low',
    reason: 'only lists mounts or NFS exports',
    examples: ['mount', 'mount -l', 'exportfs', 'exportfs -v', 'swapon --show'],
    match: (inv) => {
      const args = values(inv);
      if (named('mount')(inv)) return args.every((a) => a === '-l');
      if (named('exportfs')(inv)) return args.every((a) => a === '-v' || a === '-s');
      if (named('swapon')(inv)) return args.length > 0 && args.every((a) => ['--show', '-s', '--summary', '--noheadings', '--bytes'].includes(a));
      return false;
    },
  },
  {
    id: 'process-inspect',
    class: 'reversible_low',
    reason: 'only inspects processes',
    examples: ['strace -f -p 4242', 'ltrace -p 1', 'top -b -n 1', 'kill -l'],
    match: (inv) =>
      (named('strace', 'ltrace')(inv) && hasFlag(inv, 'p')) ||
      (named('top')(inv) && hasFlag(inv, 'b')) ||
      (named('kill')(inv) && values(inv).every((a) => a === '-l' || a === '-L' || a === '--list')),
  },
  {
    id: 'read-only-tool',
    class: 'reversible_low',
    reason: 'only reads and prints',
    examples: [
      'ls -la /media',
      "ssh -o StrictHostKeyChecking=no root@192.168.8.195 'ls -la /media'",
      'qm guest exec 101 -- cat /etc/fstab',
      'cat /etc/exports | grep media',
      'curl http://192.168.8.214:5572/rc/core/stats',
      'curl -s -o /dev/null -w "%{http_code}" http://x',
      'wget -qO- http://x/health',
      'find / -name "*.conf" -type f',
      "sed -n '1,20p' /etc/fstab",
      "awk '{print $1}' /proc/mounts",
      'df -h',
      'ls 2>/dev/null',
      'echo hi | tee /dev/null',
      'ping -c 3 192.168.8.1',
      'dmesg -T',
      'date +%s',
      'hostname',
      'dd if=/dev/sda bs=512 count=1',
      'cat /proc/meminfo',
      'docker exec netbird-mgmt cat /etc/hosts',
      'env',
    ],
    match: named(...READ_ONLY_TOOLS),
  },
];
