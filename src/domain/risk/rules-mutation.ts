// Rules for changes that can be undone: they need an approval, but lose no data.
import type { Invocation } from './args.ts';
import { hasDynamicOption, hasFlag, hasWord, named, options, positionals, subcommand, values } from './args.ts';
import { AWKS, awkWrites } from './awk.ts';
import { isContainerTool } from './docker.ts';
import { FIREWALL_TOOL } from './rules-firewall.ts';
import type { Rule } from './rule.ts';
import { unlistedPart } from './rules-read.ts';
import { HARMLESS_SINKS } from './sinks.ts';
import { sedWrites } from './sed.ts';

/** Commands whose output options (or run-time-only arguments in their place) decide whether they write. */
const FLAG_SENSITIVE = [
  'curl', 'wget', 'sed', 'awk', 'gawk', 'mawk', 'find', 'sort', 'date', 'mount', 'journalctl', 'dmesg', 'hostname',
  'exportfs', 'dd', 'top', 'ping', 'strace', 'ltrace', 'uniq', 'wipefs', 'sgdisk', 'fdisk', 'sfdisk', 'parted',
];


const CURL_VALUED = 'AbcCdDeEFHKmoPQrtTuUwxXyYz';
const CURL_VALUED_LONG = [
  '--request', '--data', '--data-ascii', '--data-binary', '--data-raw', '--data-urlencode', '--form', '--form-string',
  '--upload-file', '--json', '--output', '--dump-header', '--cookie-jar', '--header', '--user', '--user-agent',
  '--referer', '--cookie', '--max-time', '--connect-timeout', '--write-out', '--proxy', '--config', '--retry', '--url',
  '--cacert', '--cert', '--key', '--resolve', '--output-dir', '--trace', '--trace-ascii', '--stderr',
];
const CURL_DATA = ['-d', '--data', '--data-ascii', '--data-binary', '--data-raw', '--data-urlencode', '--json'];
const CURL_UPLOAD = ['-F', '--form', '--form-string', '-T', '--upload-file'];
const CURL_FILES = ['-o', '--output', '-D', '--dump-header', '-c', '--cookie-jar', '--trace', '--trace-ascii', '--stderr'];
const CURL_REMOTE_NAME = ['-O', '--remote-name', '--remote-name-all', '-J', '--remote-header-name', '-K', '--config'];

/** curl writes when it sends a method other than GET/HEAD, sends data or files, or saves anything to a file. */
function curlWrites(inv: Invocation): boolean {
  const opts = options(inv, CURL_VALUED, CURL_VALUED_LONG);
  const get = opts.some((o) => o.name === '-G' || o.name === '--get');
  return opts.some(
    (o) =>
      ((o.name === '-X' || o.name === '--request') && !['GET', 'HEAD'].includes((o.value ?? '').toUpperCase())) ||
      (CURL_DATA.includes(o.name) && !get) ||
      CURL_UPLOAD.includes(o.name) ||
      (CURL_FILES.includes(o.name) && !HARMLESS_SINKS.includes(o.value ?? '')) ||
      CURL_REMOTE_NAME.includes(o.name),
  );
}

const WGET_VALUED = 'OoaeiBtTwQPUlADIXR';
const WGET_VALUED_LONG = ['--output-document', '--output-file', '--append-output', '--post-data', '--post-file', '--method', '--body-data', '--body-file', '--header', '--user', '--password', '--timeout', '--tries', '--directory-prefix', '--input-file'];

/** wget saves what it fetches, so it only reads with -O - (to stdout) or --spider, and never with a body or method. */
function wgetWrites(inv: Invocation): boolean {
  const opts = options(inv, WGET_VALUED, WGET_VALUED_LONG);
  const toStdout = opts.some((o) => (o.name === '-O' || o.name === '--output-document') && HARMLESS_SINKS.includes(o.value ?? ''));
  const spider = opts.some((o) => o.name === '--spider');
  const sends = opts.some(
    (o) =>
      ['--post-data', '--post-file', '--body-data', '--body-file'].includes(o.name) ||
      (o.name === '--method' && !['GET', 'HEAD'].includes((o.value ?? '').toUpperCase())) ||
      (['-o', '--output-file', '-a', '--append-output'].includes(o.name) && !HARMLESS_SINKS.includes(o.value ?? '')),
  );
  return sends || !(toStdout || spider);
}

/** strace -o FILE writes the trace into FILE; -o /dev/null throws it away. */
function writesTrace(inv: Invocation): boolean {
  return options(inv, 'abeEIoOpPsSuUX', ['--output']).some((o) => (o.name === '-o' || o.name === '--output') && !HARMLESS_SINKS.includes(o.value ?? ''));
}

/** What vzdump does to the running guest, by its mode: suspend and stop take the guest away while it runs. */
function vzdumpMode(inv: Invocation): string | undefined {
  const mode = options(inv, '', ['--mode']).find((o) => o.name === '--mode' || o.name === '-mode')?.value;
  if (mode === 'stop') return 'with --mode stop it shuts the guest down for the length of the backup';
  if (mode === 'suspend') return 'with --mode suspend it suspends the guest for part of the backup';
  return undefined;
}

const SYSTEMD_TOOLS = ['systemctl', 'hostnamectl', 'timedatectl', 'localectl', 'loginctl', 'networkctl', 'resolvectl', 'service'];

export const MUTATION_RULES: readonly Rule[] = [
  {
    id: 'dynamic-option',
    class: 'config_mutation',
    reason: 'an argument known only at run time could be an option that writes',
    examples: ['date $FMT', 'find $DIR -name x', 'sort $(cat flags) data.txt'],
    match: (inv) => named(...FLAG_SENSITIVE)(inv) && hasDynamicOption(inv),
  },
  {
    id: 'curl-write',
    class: 'config_mutation',
    reason: 'curl sends a non-GET request, uploads data or saves to a file',
    examples: [
      'curl -X POST http://192.168.8.214:5572/rc/noop',
      "curl -d 'a=1' http://x/api",
      'curl --data-binary @f http://x',
      'curl -F file=@a.txt http://x/upload',
      'curl -T backup.tar ftp://x/',
      'curl -o /tmp/install.sh https://get.example.com',
      'curl -O https://example.com/a.iso',
      'curl --json \'{"a":1}\' http://x',
      'curl -XDELETE http://x/item/1',
      'curl --request PUT http://x',
    ],
    match: (inv) => named('curl')(inv) && curlWrites(inv),
  },
  {
    id: 'wget-write',
    class: 'config_mutation',
    reason: 'wget saves what it fetches to a file unless told -O - or --spider, and may post data',
    examples: ['wget https://example.com/a.iso', 'wget -O /tmp/x https://example.com', "wget --post-data 'a=1' -O- http://x"],
    match: (inv) => named('wget')(inv) && wgetWrites(inv),
  },
  {
    id: 'sed-in-place',
    class: 'config_mutation',
    reason: 'sed -i edits files in place, and its w command writes files',
    examples: ["sed -i 's/a/b/' /etc/exports", "sed --in-place=.bak -e 's/x/y/' f", "sed -n 'w out.txt' in.txt", "sed 's/a/b/w changed.txt' f"],
    match: (inv) => named('sed')(inv) && sedWrites(inv),
  },
  {
    id: 'awk-writes',
    class: 'config_mutation',
    reason: 'the awk program writes files',
    examples: [`awk '{ print > "out.txt" }' in`, 'gawk -i inplace \'{print}\' f'],
    match: (inv) => named(...AWKS)(inv) && awkWrites(inv),
  },
  {
    id: 'tee-file',
    class: 'config_mutation',
    reason: 'tee writes its input into files',
    examples: ['ls 2>&1 | tee /tmp/log', 'echo x | tee -a /etc/hosts'],
    match: (inv) => named('tee')(inv) && positionals(inv).some((p) => p === undefined || !HARMLESS_SINKS.includes(p)),
  },
  {
    id: 'find-exec',
    class: 'config_mutation',
    reason: 'find -exec runs a command on every match, and -fprint writes a file',
    examples: ['find /etc -name "*.conf" -exec cat {} \\;', 'find / -fprint /tmp/list'],
    match: (inv) => named('find')(inv) && hasWord(inv, ['-exec', '-execdir', '-ok', '-okdir', '-fprint', '-fprint0', '-fprintf', '-fls']),
  },
  {
    id: 'output-file-option',
    class: 'config_mutation',
    reason: 'an option makes it write its output into a file',
    examples: ['sort -o sorted.txt in.txt', 'uniq in.txt out.txt', 'strace -o /tmp/trace -p 1234', 'tcpdump -w /tmp/cap.pcap', 'pg_dump -f /tmp/db.sql app'],
    match: (inv) =>
      (named('sort')(inv) && hasFlag(inv, 'o', ['--output'])) ||
      (named('uniq')(inv) && positionals(inv, ['-f', '-s', '-w']).length > 1) ||
      (named('strace', 'ltrace')(inv) && writesTrace(inv)) ||
      (named('tcpdump')(inv) && hasFlag(inv, 'w')) ||
      (named('pg_dump', 'pg_dumpall')(inv) && hasFlag(inv, 'f', ['--file'])),
  },
  {
    id: 'journalctl-maintenance',
    class: 'config_mutation',
    reason: 'vacuuming, rotating or flushing the journal changes or deletes journal files',
    examples: ['journalctl --vacuum-time=7d', 'journalctl --vacuum-size=500M', 'journalctl --rotate', 'journalctl --flush'],
    match: (inv) =>
      named('journalctl')(inv) &&
      values(inv).some((v) => v.startsWith('--vacuum-') || ['--rotate', '--flush', '--sync', '--relinquish-var', '--setup-keys'].includes(v)),
  },
  {
    id: 'dmesg-clear',
    class: 'config_mutation',
    reason: 'clears the kernel ring buffer or changes console logging',
    examples: ['dmesg -c', 'dmesg --clear'],
    match: (inv) => named('dmesg')(inv) && hasFlag(inv, 'cCDEn', ['--clear', '--read-clear', '--console-off', '--console-on', '--console-level']),
  },
  {
    id: 'system-settings-change',
    class: 'config_mutation',
    reason: 'sets the host name, clock or another system setting',
    examples: ['hostname newname', 'date -s "2026-01-01 00:00"', 'timedatectl set-timezone Europe/Berlin', 'hostnamectl set-hostname strong'],
    match: (inv) =>
      (named('hostname')(inv) && positionals(inv).length > 0) ||
      (named('date')(inv) && hasFlag(inv, 's', ['--set'])) ||
      (named('hostnamectl', 'timedatectl', 'localectl')(inv) && (subcommand(inv) ?? '').startsWith('set-')),
  },
  {
    id: 'ping-unbounded',
    class: 'config_mutation',
    reason: 'ping without -c or -w never finishes on its own',
    examples: ['ping 192.168.8.1'],
    match: (inv) => named('ping', 'ping6')(inv) && !hasFlag(inv, 'cw', []),
  },
];

/**
 * A command a read rule covers in a form that would read, but with an option or operand its table does not list:
 * the option may write, run a program or read beyond what the command shows, so it is at least a mutation.
 */
export const UNLISTED_RULE: Rule = {
  id: 'unlisted-option',
  class: 'config_mutation',
  reason: 'uses an option, operand or statement that is not on its read-only list',
  examples: [
    'git -c color.ui=always status',
    'git log --output=/tmp/f',
    'ss -K dst 10.0.0.1',
    "sqlite3 app.db \"SELECT writefile('/tmp/x', 'y')\"",
    'curl gopher://127.0.0.1:6379/_FLUSHALL',
    'apt-get -s -o APT::Get::Simulate=false remove nginx',
    "less '+!sh' /etc/hosts",
  ],
  match: (inv) => unlistedPart(inv) !== undefined,
  detail: unlistedPart,
};

/** Rules for known mutating-but-reversible commands, checked after the read-only allowlist has had its say. */
export const CHANGE_RULES: readonly Rule[] = [
  UNLISTED_RULE,
  {
    id: 'service-change',
    class: 'config_mutation',
    reason: 'starts, stops, restarts or reconfigures services',
    examples: ['systemctl restart nfs-server', 'systemctl enable --now rclone-backup.timer', 'systemctl daemon-reload', 'service nginx reload', 'systemctl stop x'],
    match: named(...SYSTEMD_TOOLS),
  },
  {
    id: 'file-change',
    class: 'config_mutation',
    reason: 'changes files, ownership or permissions',
    examples: ['chown :10000 /mnt/media_local', 'chmod 2775 /mnt/x', 'mkdir -p /srv/a', 'mv a b', 'cp -a a b', 'touch /tmp/x', 'truncate -s +1G /srv/disk.img', 'ln -s a b', 'rmdir /media/media', 'rsync -a /src/ /dst/'],
    match: named('chown', 'chmod', 'chgrp', 'mkdir', 'mv', 'cp', 'touch', 'truncate', 'ln', 'rmdir', 'install', 'rsync', 'setfacl', 'chattr', 'mktemp', 'mkfifo', 'patch', 'tar', 'unzip', 'gzip', 'gunzip'),
  },
  {
    id: 'package-change',
    class: 'config_mutation',
    reason: 'installs, upgrades or removes packages, or refreshes package lists',
    examples: ['apt install -y nfs-kernel-server', 'apt-get upgrade -y', 'apt update', 'apt-get dist-upgrade', 'dpkg -i x.deb', 'apt remove nginx'],
    match: named('apt', 'apt-get', 'aptitude', 'dpkg', 'snap', 'pip', 'pip3', 'npm'),
  },
  {
    id: 'zpool-scrub',
    class: 'config_mutation',
    // Decision: it changes no data, but it loads every disk of the pool for hours, so it waits for an approval.
    reason: 'reads and verifies every block of the pool in the background (or stops or pauses that), a heavy I/O load on its disks until it ends',
    examples: ['zpool scrub tank', 'zpool scrub -s rpool', 'zpool trim rpool'],
    match: (inv) => named('zpool')(inv) && ['scrub', 'trim'].includes(subcommand(inv) ?? ''),
  },
  {
    id: 'vzdump-backup',
    class: 'config_mutation',
    reason: 'writes a backup of the guest to storage (and may prune older backups there)',
    examples: ['vzdump 100', 'vzdump 100 --mode snapshot --storage pbs', 'vzdump --all --mode stop'],
    match: named('vzdump'),
    detail: vzdumpMode,
  },
  {
    id: 'proxmox-change',
    class: 'config_mutation',
    reason: 'changes a Proxmox guest, storage or cluster setting',
    examples: ['pct set 132 --memory 4096', 'pct start 132', 'pct stop 132', 'pct reboot 132', 'pct migrate 132 strong', 'qm set 101 --memory 8192', 'qm start 101', 'qm stop 101', 'pct create 140 local:vztmpl/debian.tar.zst'],
    match: named('pct', 'qm', 'pvesm', 'pvesh', 'pvecm', 'ha-manager', 'qmrestore', 'pct-restore'),
  },
  {
    id: 'docker-change',
    class: 'config_mutation',
    reason: 'changes containers, images or compose services',
    examples: ['docker restart netbird-mgmt', 'docker compose up -d', 'docker compose pull', 'docker pull nginx', 'docker rm old', 'docker-compose up -d --build', 'podman restart web'],
    match: isContainerTool,
  },
  {
    id: 'zfs-change',
    class: 'config_mutation',
    reason: 'changes ZFS datasets, snapshots or pools',
    examples: ['zfs snapshot rpool/data@x', 'zfs set compression=lz4 tank', 'zfs create tank/new'],
    match: named('zfs', 'zpool'),
  },
  {
    id: 'mount-change',
    class: 'config_mutation',
    reason: 'mounts, unmounts or changes NFS exports or swap',
    examples: ['mount -t nfs 192.168.8.10:/mnt/x /media/x', 'umount /media/media', 'exportfs -a', 'exportfs -r', 'exportfs -u *:/mnt/media_local', 'swapoff -a'],
    match: named('mount', 'umount', 'exportfs', 'swapon', 'swapoff'),
  },
  {
    id: 'process-signal',
    class: 'config_mutation',
    reason: 'signals or kills processes',
    examples: ['kill -9 1234', 'killall -9 chgrp chown', 'pkill rclone'],
    match: named('kill', 'killall', 'pkill'),
  },
  {
    id: 'network-change',
    class: 'config_mutation',
    reason: 'changes addresses, routes, links or firewall rules',
    examples: ['ip addr add 10.0.0.2/24 dev eth0', 'ip link set veth132i0 down', 'iptables -A INPUT -j DROP', 'nft add rule inet filter input tcp dport 22 accept', 'ufw allow 22/tcp', 'firewall-cmd --add-port=8080/tcp'],
    match: (inv) => named('ip', 'ifup', 'ifdown')(inv) || FIREWALL_TOOL(inv),
  },
  {
    id: 'database-change',
    class: 'config_mutation',
    reason: 'runs SQL or database commands that may change data',
    examples: ["psql -c 'UPDATE users SET a=1 WHERE id=2'", 'redis-cli SET k v', "mysql -e 'DELETE FROM t WHERE id=1'", "sqlite3 app.db 'INSERT INTO t VALUES (1)'"],
    match: named('psql', 'mysql', 'mariadb', 'sqlite3', 'redis-cli', 'clickhouse-client', 'mysqladmin'),
  },
  {
    id: 'git-change',
    class: 'config_mutation',
    reason: 'changes the repository or its working tree',
    examples: ['git pull', 'git commit -m x', 'git checkout main'],
    match: named('git'),
  },
  {
    id: 'rclone-change',
    class: 'config_mutation',
    reason: 'copies or moves files, or changes rclone configuration',
    examples: ['rclone copy /mnt/media b2:media', 'rclone move a b:c'],
    match: named('rclone'),
  },
];
