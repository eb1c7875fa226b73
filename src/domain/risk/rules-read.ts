// The read-only allow-list: commands and sub-commands that change nothing, each with the options it may take (the
// tables live beside the judge of each rule). Anything not here, or here with an option its table does not list, is
// at least a mutation: UNLISTED_RULE in rules-mutation.ts names the option when nothing more specific matches.
import type { Invocation } from './args.ts';
import { named } from './args.ts';
import { isContainerTool } from './docker.ts';
import { onlyAsksVersion } from './interpreters.ts';
import { judgeGit } from './git.ts';
import { judgeIp } from './ip.ts';
import type { Judge, Judgement } from './judgement.ts';
import { OTHER } from './judgement.ts';
import { judgeDatabase } from './read-database.ts';
import { judgeMounts, judgePackages, judgeProcesses, judgeRclone, judgeStorage } from './read-host.ts';
import { judgeDocker, judgeProxmox, judgeSystemd, judgeZfs } from './read-services.ts';
import { judgeReadTool } from './read-tools.ts';
import { FIREWALL_READ_RULE, judgeFirewall } from './rules-firewall.ts';
import type { Rule } from './rule.ts';

const oneOf = (value: string | undefined, allowed: readonly string[]): boolean => value !== undefined && allowed.includes(value);

/** Tools whose --version is known to print and exit (for interpreters see interpreters.ts). */
const VERSION_TOOLS = ['psql', 'mysql', 'mariadb', 'sqlite3', 'redis-cli', 'mongosh', 'docker', 'podman', 'nerdctl', 'nft', 'iptables', 'ufw', 'firewall-cmd', 'sed', 'awk', 'gawk'];

const only = (test: (inv: Invocation) => boolean, judge: Judge): Judge => (inv) => (test(inv) ? judge(inv) : OTHER);

interface ReadRule extends Rule {
  readonly judge: Judge;
}

function readRule(rule: Omit<Rule, 'class' | 'match'>, judge: Judge): ReadRule {
  return { ...rule, class: 'reversible_low', judge, match: (inv) => judge(inv).kind === 'reads' };
}

const VERSION_RULE = readRule(
  {
    id: 'version-query',
    reason: 'only prints its version or help',
    examples: ['python3 --version', 'perl -v', 'node --version', 'php -v', 'psql --version', 'docker --version'],
  },
  (inv) => (onlyAsksVersion(inv) || (named(...VERSION_TOOLS)(inv) && inv.args.length === 1 && oneOf(inv.args[0]?.value, ['--version', '-V', '-version'])) ? { kind: 'reads' } : OTHER),
);

const RULES: readonly ReadRule[] = [
  readRule({ id: FIREWALL_READ_RULE.id, reason: FIREWALL_READ_RULE.reason, examples: FIREWALL_READ_RULE.examples }, judgeFirewall),
  VERSION_RULE,
  readRule(
    {
      id: 'systemd-read',
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
        'resolvectl status',
        'resolvectl dns eth0',
        'hostnamectl hostname',
      ],
    },
    judgeSystemd,
  ),
  readRule(
    {
      id: 'docker-read',
      reason: 'only shows containers, images or compose state',
      examples: ['docker ps -a', 'docker logs --tail 100 netbird-mgmt', 'docker inspect x', 'docker compose ps', 'docker compose logs -f web', 'docker stats --no-stream', 'docker volume ls', 'podman ps -a'],
    },
    only(isContainerTool, judgeDocker),
  ),
  readRule(
    {
      id: 'zfs-read',
      reason: 'only reads ZFS state',
      examples: ['zfs list -t snapshot', 'zpool status -v', 'zfs get compression tank', 'zpool iostat 5 3', 'zpool list', 'zfs list -H -o name,used -s used'],
    },
    judgeZfs,
  ),
  readRule(
    {
      id: 'proxmox-read',
      reason: 'only reads Proxmox guest, storage or cluster state',
      examples: ['pct list', 'pct config 132', 'pct df 132', 'qm status 101', 'qm config 101', 'pvesm status', 'pveversion -v', 'pvesh get /nodes', 'qm guest cmd 101 get-osinfo'],
    },
    judgeProxmox,
  ),
  readRule(
    {
      id: 'package-read',
      reason: 'only queries the package database',
      examples: ['apt list --upgradable', 'apt show nginx', 'apt policy zfsutils-linux', 'apt-cache policy docker-ce', 'dpkg -l', 'dpkg -L nfs-kernel-server', 'apt-get -s upgrade'],
    },
    judgePackages,
  ),
  readRule(
    {
      id: 'git-read',
      reason: 'only reads the repository',
      examples: ['git status', 'git log --oneline -5', 'git -C /opt/app diff', 'git branch', 'git remote -v', 'git --no-pager log -p -n 3', 'git config --get user.name'],
    },
    only(named('git'), judgeGit),
  ),
  readRule(
    {
      id: 'rclone-read',
      reason: 'only lists or checks remote files',
      examples: ['rclone lsd b2:', 'rclone size b2:media', 'rclone listremotes', 'rclone config show'],
    },
    judgeRclone,
  ),
  readRule(
    {
      id: 'database-read',
      reason: 'only runs queries that read',
      examples: ["psql -c 'SELECT count(*) FROM events'", 'psql -l', 'redis-cli INFO', "mysql -e 'SHOW DATABASES'", "sqlite3 app.db '.tables'", "psql <<'EOF'\nSELECT 1;\nEOF", "psql -c 'EXPLAIN DELETE FROM events'"],
    },
    judgeDatabase,
  ),
  readRule(
    {
      id: 'network-read',
      reason: 'only shows addresses, routes or links',
      examples: ['ip addr', 'ip -br a', 'ip route show', 'ip link show eth0', 'ip r get 1.1.1.1', 'ip -s -d link list'],
    },
    judgeIp,
  ),
  readRule(
    {
      id: 'storage-read',
      reason: 'only lists disks, partitions, volumes or their health',
      examples: ['lsblk -f', 'blkid', 'fdisk -l', 'sgdisk -p /dev/sda', 'parted -l', 'wipefs /dev/sdb', 'lvs', 'smartctl -a /dev/sda'],
    },
    judgeStorage,
  ),
  readRule(
    {
      id: 'mount-read',
      reason: 'only lists mounts or NFS exports',
      examples: ['mount', 'mount -l', 'exportfs', 'exportfs -v', 'swapon --show'],
    },
    judgeMounts,
  ),
  readRule(
    {
      id: 'process-inspect',
      reason: 'only inspects processes',
      examples: ['strace -f -p 4242', 'ltrace -p 1', 'top -b -n 1', 'kill -l'],
    },
    judgeProcesses,
  ),
  readRule(
    {
      id: 'read-only-tool',
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
        'sort -k2 -n /etc/passwd',
        'journalctl -u nginx --since today --no-pager',
      ],
    },
    (inv) => judgeReadTool(inv) ?? OTHER,
  ),
];

export const READ_RULES: readonly Rule[] = RULES;

/** Why a command a read rule covers is not read-only because of an option or operand, or undefined. */
export function unlistedPart(inv: Invocation): string | undefined {
  const judged: Judgement[] = RULES.map((rule) => rule.judge(inv));
  if (judged.some((j) => j.kind === 'reads')) return undefined;
  const refused = judged.find((j) => j.kind === 'unlisted');
  return refused?.kind === 'unlisted' ? refused.why : undefined;
}
