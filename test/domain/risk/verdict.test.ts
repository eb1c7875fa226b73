// What a verdict says besides its class: the commands it looked at and the part it names, plus the two helpers.
import { describe, expect, it } from 'vitest';
import { RULES_VERSION, classify, isKnownLong, normaliseCommand } from '../../../src/domain/risk/index.ts';

describe('inner_commands', () => {
  it.each([
    ['pct exec 132 -- systemctl status rclone-backup.timer', ['systemctl status rclone-backup.timer']],
    ["ssh -o StrictHostKeyChecking=no root@192.168.8.195 'ls -la /media'", ['ls -la /media']],
    [`sudo -u postgres timeout 30 bash -c "psql -c 'DROP TABLE x'"`, ["psql -c 'DROP TABLE x'"]],
    ['cat /etc/exports | grep media', ['cat /etc/exports', 'grep media']],
    ['ls $(rm -rf /tmp/x)', ['ls $(rm -rf /tmp/x)', 'rm -rf /tmp/x']],
    ['find /tmp -name x -exec rm {} \\;', ["find /tmp -name x -exec rm {} ';'", 'rm {}']],
    ["chown  ':10000'   \"/mnt/media local\"", ["chown :10000 '/mnt/media local'"]],
    ['', []],
  ])('%j → %j', (command, inner) => {
    expect(classify(command).inner_commands).toEqual(inner);
  });
});

describe('reason', () => {
  it('names the deciding part and why', () => {
    expect(classify('rm -rf /data').reason).toBe('rm -rf /data: recursive or forced removal loses data');
  });

  it('names the most severe part of a compound command, not the first', () => {
    const verdict = classify('systemctl status nfs && exportfs -a && ls');
    expect(verdict.reason).toMatch(/^exportfs -a: /);
  });

  it('names the file a redirection writes', () => {
    expect(classify('echo hi > /etc/motd').reason).toBe('echo hi > /etc/motd: redirects output into a file');
  });

  it('says why a wrapper is opaque', () => {
    expect(classify('bash /root/fix.sh').reason).toBe('bash /root/fix.sh: runs code that is not visible in the command line: it runs the script file /root/fix.sh');
    expect(classify('ssh -N -L 8080:localhost:80 host').reason).toContain('it only opens a tunnel');
  });

  it('carries the parser error for unparseable input', () => {
    expect(classify("echo 'unterminated").reason).toContain('closing quote');
  });
});

describe('RULES_VERSION', () => {
  it('is set, for approvals to hash in', () => {
    expect(RULES_VERSION).toBeTruthy();
  });
});

describe('isKnownLong', () => {
  it.each([
    ['apt upgrade -y', true],
    ['apt-get dist-upgrade', true],
    ['apt full-upgrade', true],
    ['pct exec 132 -- apt-get install -y rclone', true],
    ['pct migrate 132 strong --restart', true],
    ['qm migrate 101 hubris --online', true],
    ['rclone sync /mnt/media b2:media', true],
    ['sudo rclone copy a b:c', true],
    ['dd if=/dev/sda of=/tmp/mbr bs=512 count=1', true],
    ['docker compose pull', true],
    ['docker compose up -d --build', true],
    ['zfs send tank/a@s | ssh backup zfs recv pool/a', true],
    ['apt list --upgradable', false],
    ['docker compose up -d', false],
    ['rclone lsd b2:', false],
    ["echo 'unterminated", false],
    ['', false],
  ])('%j → %s', (command, long) => {
    expect(isKnownLong(command)).toBe(long);
  });
});

describe('normaliseCommand', () => {
  it('ignores quoting and spacing between words', () => {
    expect(normaliseCommand("chown  ':10000'   /mnt/x")).toBe(normaliseCommand('chown :10000 /mnt/x'));
    expect(normaliseCommand('chown :10000 /mnt/x')).toBe('chown :10000 /mnt/x');
  });

  it('gives one spelling to the same argv however it is quoted', () => {
    const spellings = ['echo "a b"', "echo 'a b'", 'echo a\\ b', "echo 'a'\" b\""];
    expect(new Set(spellings.map(normaliseCommand))).toEqual(new Set(["echo 'a b'"]));
  });

  it('keeps different commands apart', () => {
    expect(normaliseCommand('ls *.log')).not.toBe(normaliseCommand("ls '*.log'"));
    expect(normaliseCommand('a && b')).not.toBe(normaliseCommand('a || b'));
    expect(normaliseCommand('echo "$x  y"')).toBe('echo "$x  y"');
  });

  it('collapses spacing around operators and inside substitutions', () => {
    expect(normaliseCommand("ls   -la   &&  echo  $(cat   'x')")).toBe('ls -la && echo $(cat x)');
  });

  it('handles text beyond ASCII', () => {
    expect(normaliseCommand("echo   'é  ü'    ok")).toBe("echo 'é  ü' ok");
  });

  it('falls back to trimmed, collapsed text when the command does not parse', () => {
    expect(normaliseCommand("  echo   'unterminated  ")).toBe("echo 'unterminated");
  });
});
