// Rules for data loss and the irreversible.
import type { Invocation } from './args.ts';
import { hasFlag, hasWord, named, positionals, subcommand, values } from './args.ts';
import { DOCKER_VALUED, isComposeTool, isContainerTool } from './docker.ts';
import type { Rule } from './rule.ts';
import { isDestructiveSql, sqlOf } from './sql.ts';

const lower = (inv: Invocation): string[] => values(inv).map((v) => v.toLowerCase());

const PARTITION_READ_FLAGS = ['-p', '--print', '-i', '--info', '-v', '--verify', '-l', '--list', '-d', '--dump', '-s', '--show-size'];

function writesPartitionTable(inv: Invocation): boolean {
  const args = values(inv);
  switch (inv.name ?? '') {
    case 'parted':
      return lower(inv).some((v) => ['mklabel', 'mktable', 'rm', 'mkpart', 'resizepart', 'mkpartfs'].includes(v));
    case 'sgdisk':
    case 'fdisk':
    case 'sfdisk':
    case 'gdisk':
    case 'cfdisk':
      return !args.some((v) => PARTITION_READ_FLAGS.includes(v));
    default:
      return false;
  }
}

const ZFS_VALUED = ['-o', '-t', '-s', '-S', '-d'];

/** Forced removal or bulk pruning of containers and images (volumes have their own rule below). */
function removesContainers(inv: Invocation): boolean {
  if (!isContainerTool(inv)) return false;
  const [first, second] = positionals(inv, DOCKER_VALUED);
  const force = hasFlag(inv, 'f', ['--force']);
  const composeAction = isComposeTool(inv) ? first : first === 'compose' ? second : undefined;
  if (composeAction !== undefined) return composeAction === 'rm' && force;
  switch (first) {
    case 'rm':
    case 'rmi':
      return force;
    case 'container':
    case 'image':
    case 'pod':
      if (second === 'rm' || second === 'remove') return force;
      if (second === 'prune') return first !== 'image' || hasFlag(inv, 'a', ['--all']);
      return false;
    case 'system':
      return second === 'prune' || second === 'reset';
    default:
      return false;
  }
}

export const DESTRUCTIVE_RULES: readonly Rule[] = [
  {
    id: 'rm-recursive-or-forced',
    class: 'destructive',
    reason: 'recursive or forced removal loses data',
    examples: ['rm -rf /data', 'rm -r /tmp/x', 'rm --force /var/lib/x.db', 'ls $(rm -rf /tmp/x)', 'find /var/log -name "*.gz" -exec rm -f {} +', 'ip netns exec blue rm -rf /srv/x', 'ip vrf exec blue rm -rf /srv/x', 'chrt -f 10 rm -rf /srv/x', 'taskset -c 0 rm -rf /srv/x', "flock /tmp/lock -c 'rm -rf /srv/x'", 'timeout --kill 5 10 rm -rf /srv/x', 'sudo --us root rm -rf /srv/x'],
    match: (inv) => named('rm')(inv) && hasFlag(inv, 'rRf', ['--recursive', '--force']),
  },
  {
    id: 'rm-files',
    class: 'destructive',
    // Decision: plain rm is destructive too. Nothing keeps a copy, so even one removed file cannot be restored.
    reason: 'removing files cannot be undone',
    examples: ['rm /tmp/backup.tar', 'unlink /etc/nginx/sites-enabled/default', 'ls | xargs rm', 'find /tmp -name x -exec rm {} \\;'],
    match: named('rm', 'unlink'),
  },
  {
    id: 'dd-write',
    class: 'destructive',
    reason: 'dd with of= overwrites its target block by block',
    examples: ['dd if=/dev/zero of=/dev/sdb bs=1M', 'dd if=image.raw of=/dev/zvol/rpool/vm-100-disk-0', 'xargs -l dd of=/dev/sdb', 'flock -w 5 /run/lock dd if=/dev/zero of=/dev/sdb'],
    match: (inv) => named('dd')(inv) && hasWord(inv, ['of']),
  },
  {
    id: 'format-device',
    class: 'destructive',
    reason: 'formatting or discarding a device destroys what is on it',
    examples: ['mkfs.ext4 /dev/sdb1', 'mkfs -t xfs /dev/sdc', 'mkswap /dev/sdd2', 'blkdiscard /dev/nvme1n1', 'cryptsetup luksFormat /dev/sde'],
    match: (inv) =>
      /^(mkfs(\..+)?|mke2fs|mkswap|blkdiscard)$/.test(inv.name ?? '') ||
      (named('cryptsetup')(inv) && ['luksFormat', 'erase', 'luksErase'].includes(subcommand(inv) ?? '')),
  },
  {
    id: 'wipe-signatures',
    class: 'destructive',
    reason: 'wiping file-system or partition signatures makes the data unreachable',
    examples: ['wipefs -a /dev/sdb', 'wipefs --all --force /dev/sdc', 'shred -u secrets.txt'],
    match: (inv) => named('shred')(inv) || (named('wipefs')(inv) && hasFlag(inv, 'ao', ['--all', '--offset'])),
  },
  {
    id: 'partition-table-write',
    class: 'destructive',
    reason: 'rewriting a partition table loses the partitions on the disk',
    examples: ['sgdisk --zap-all /dev/sdb', 'sgdisk -Z /dev/sdc', 'parted -s /dev/sdb mklabel gpt', 'parted /dev/sdb rm 1', 'fdisk /dev/sdb'],
    match: writesPartitionTable,
  },
  {
    id: 'zfs-destroy',
    class: 'destructive',
    reason: 'destroying a ZFS dataset, snapshot or pool, or clearing its label, loses its data',
    examples: ['zfs destroy -r rpool/data/subvol-132-disk-0', 'zpool destroy tank', 'zpool labelclear -f /dev/sdb'],
    match: (inv) =>
      (named('zfs')(inv) && subcommand(inv) === 'destroy') ||
      (named('zpool')(inv) && ['destroy', 'labelclear'].includes(subcommand(inv) ?? '')),
  },
  {
    id: 'zfs-rollback',
    class: 'destructive',
    reason: 'rolling back discards every change since the snapshot (and with -r the later snapshots)',
    examples: ['zfs rollback -r rpool/data@before-upgrade', 'zfs rollback tank/media@daily'],
    match: (inv) => named('zfs')(inv) && subcommand(inv) === 'rollback',
  },
  {
    id: 'zfs-receive-force',
    class: 'destructive',
    reason: 'a forced receive rolls the target back and destroys what differs',
    examples: ['zfs send tank/a@s | ssh backup zfs recv -F pool/a'],
    match: (inv) => named('zfs')(inv) && ['recv', 'receive'].includes(subcommand(inv) ?? '') && hasFlag(inv, 'F'),
  },
  {
    id: 'zpool-create',
    class: 'destructive',
    reason: 'creating a pool overwrites the disks it is made of',
    examples: ['zpool create -f tank mirror /dev/sdb /dev/sdc'],
    match: (inv) => named('zpool')(inv) && subcommand(inv, ZFS_VALUED) === 'create',
  },
  {
    id: 'proxmox-destroy',
    class: 'destructive',
    reason: 'destroying a guest or freeing a volume deletes its disks',
    examples: ['pct destroy 132', 'qm destroy 101 --purge', 'pvesm free local-lvm:vm-101-disk-0', 'nice --adj 5 qm destroy 100', 'stdbuf --out L qm destroy 100'],
    match: (inv) =>
      (named('pct', 'qm')(inv) && subcommand(inv) === 'destroy') || (named('pvesm')(inv) && subcommand(inv) === 'free'),
  },
  {
    id: 'lvm-remove',
    class: 'destructive',
    reason: 'removing or shrinking a logical volume, volume group or physical volume loses its data',
    examples: ['lvremove -y pve/vm-101-disk-0', 'vgremove library', 'pvremove /dev/sdb', 'lvreduce -L 10G pve/data'],
    match: named('lvremove', 'vgremove', 'pvremove', 'lvreduce'),
  },
  {
    id: 'docker-volume-remove',
    class: 'destructive',
    reason: 'removing or pruning docker volumes deletes the data in them',
    examples: ['docker volume rm netbird_data', 'docker volume prune -f', 'docker system prune -af --volumes', 'docker rm -v old', 'docker compose down -v', 'podman volume rm data'],
    match: (inv) => {
      if (!isContainerTool(inv)) return false;
      const args = values(inv);
      const [first, second] = positionals(inv);
      if (first === 'volume') return ['rm', 'remove', 'prune'].includes(second ?? '');
      if (first === 'system' && second === 'prune') return args.includes('--volumes');
      if (first === 'rm' || (first === 'container' && second === 'rm')) return hasFlag(inv, 'v', ['--volumes']);
      const down = isComposeTool(inv) ? first === 'down' : first === 'compose' && positionals(inv).includes('down');
      return down && hasFlag(inv, 'v', ['--volumes']);
    },
  },
  {
    id: 'container-remove',
    class: 'destructive',
    reason: 'force-removes containers or images, or prunes them in bulk: what was in them is lost',
    examples: ['docker rm -f web', 'docker container rm --force web', 'docker rmi -f nginx:old', 'docker image prune -a', 'docker system prune -f', 'docker container prune', 'podman rm -af', 'podman system reset', 'docker compose rm -f'],
    match: removesContainers,
  },
  {
    id: 'find-delete',
    class: 'destructive',
    reason: 'find -delete removes every match',
    examples: ["find /tmp -name '*.log' -mtime +7 -delete"],
    match: (inv) => named('find')(inv) && hasWord(inv, ['-delete']),
  },
  {
    id: 'sql-destructive',
    class: 'destructive',
    reason: 'DROP, TRUNCATE, ALTER … DROP, or DELETE or UPDATE without WHERE loses data',
    examples: [
      `sudo -u postgres timeout 30 bash -c "psql -c 'DROP TABLE x'"`,
      "mysql -e 'DELETE FROM sessions' app",
      'psql -d app -c "TRUNCATE events"',
      "sqlite3 app.db 'drop table users'",
      'dropdb app',
      'mysqladmin -f drop app',
      "psql -c 'ALTER TABLE users DROP COLUMN email'",
      "psql <<'EOF'\nDROP SCHEMA public CASCADE;\nEOF",
    ],
    match: (inv) =>
      named('dropdb')(inv) ||
      (named('mysqladmin')(inv) && positionals(inv, ['-u', '-h', '-P', '-S', '--user', '--host', '--port', '--socket']).includes('drop')) ||
      (sqlOf(inv) ?? []).some((sql) => sql !== undefined && isDestructiveSql(sql)),
  },
  {
    id: 'redis-flush',
    class: 'destructive',
    reason: 'FLUSHALL and FLUSHDB delete every key',
    examples: ['redis-cli FLUSHALL', 'redis-cli -n 2 flushdb'],
    match: (inv) => named('redis-cli')(inv) && lower(inv).some((v) => v === 'flushall' || v === 'flushdb'),
  },
  {
    id: 'git-discard',
    class: 'destructive',
    reason: 'discards uncommitted work or rewrites history',
    examples: ['git clean -fdx', 'git reset --hard origin/main', 'git push --force origin main', 'git branch -D old', 'git stash drop'],
    match: (inv) => {
      if (!named('git')(inv)) return false;
      const [sub, arg] = positionals(inv, ['-C', '-c']);
      const args = values(inv);
      switch (sub ?? '') {
        case 'clean':
          return hasFlag(inv, 'f', ['--force']);
        case 'reset':
          return args.includes('--hard');
        case 'push':
          return hasFlag(inv, 'f', ['--force', '--force-with-lease', '--mirror', '--delete']);
        case 'branch':
          return hasFlag(inv, 'D');
        case 'stash':
          return arg === 'drop' || arg === 'clear';
        case 'checkout':
          return hasFlag(inv, 'f', ['--force']) || args.includes('.');
        default:
          return false;
      }
    },
  },
  {
    id: 'sync-delete',
    class: 'destructive',
    reason: 'deletes files at the destination that the source lacks, or deletes remote files outright',
    examples: ['rsync -a --delete /src/ /dst/', 'rclone sync /mnt/media b2:media', 'rclone purge b2:old'],
    match: (inv) =>
      (named('rsync')(inv) && values(inv).some((v) => v.startsWith('--delete') || v === '--remove-source-files')) ||
      (named('rclone')(inv) && ['sync', 'delete', 'deletefile', 'purge', 'rmdirs', 'cleanup', 'dedupe'].includes(subcommand(inv) ?? '')),
  },
  {
    id: 'package-purge',
    class: 'destructive',
    reason: 'purging a package deletes its configuration files as well',
    examples: ['apt purge nginx', 'apt-get remove --purge -y samba', 'dpkg -P foo'],
    match: (inv) =>
      (named('apt', 'apt-get')(inv) && (subcommand(inv) === 'purge' || values(inv).includes('--purge'))) ||
      (named('dpkg')(inv) && hasFlag(inv, 'P', ['--purge'])),
  },
];
