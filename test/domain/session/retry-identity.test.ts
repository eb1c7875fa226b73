// The retry cap's identity of a command: the same final command on the same final target is one identity
// however it is wrapped (sh -c, bash -c, sudo, an ssh hop, pct exec, qm guest exec, and these composed), and
// another command, container, VM, host or user is another.
import { describe, expect, it } from 'vitest';
import { retryIdentity, type SentTo } from '../../../src/domain/session/retry-identity.ts';

const onA: SentTo = { kind: 'host', host: 'host:a', pveId: null };
const onB: SentTo = { kind: 'host', host: 'host:b', pveId: null };
const lxc101: SentTo = { kind: 'lxc', host: 'host:a', pveId: 101 };
const vm200: SentTo = { kind: 'vm', host: 'host:a', pveId: 200 };
const addresses = new Map([['10.0.0.7', 'host:b'], ['10.0.0.6', 'host:a']]);

const id = (sentTo: SentTo, command: string) => retryIdentity(sentTo, command, addresses);

type Row = [wrapped: string, sentTo: SentTo, command: string, sameAs: SentTo, bare: string];

const same: Row[] = [
  ['spacing and quoting', onA, `cat   '/x'`, onA, 'cat /x'],
  ['sh -c', onA, `sh -c 'cat /x'`, onA, 'cat /x'],
  ['bash -c with double quotes', onA, `bash -c "cat /x"`, onA, 'cat /x'],
  ['bash -lc', onA, `bash -lc 'cat /x'`, onA, 'cat /x'],
  ['sudo', onA, 'sudo cat /x', onA, 'cat /x'],
  ['sudo -u root', onA, 'sudo -u root cat /x', onA, 'cat /x'],
  ['sudo -n', onA, 'sudo -n cat /x', onA, 'cat /x'],
  ['ssh hop to a registered host', onA, `ssh root@10.0.0.7 'cat /x'`, onB, 'cat /x'],
  ['ssh hop with options and no user', onA, `ssh -o StrictHostKeyChecking=no -p 22 10.0.0.7 cat /x`, onB, 'cat /x'],
  ['ssh hop from a container', lxc101, `ssh 10.0.0.7 'cat /x'`, onB, 'cat /x'],
  ['pct exec on the host is the lxc target', onA, 'pct exec 101 -- cat /x', lxc101, 'cat /x'],
  ['pct exec -- sh -c', onA, `pct exec 101 -- sh -c 'cat /x'`, lxc101, 'cat /x'],
  ['qm guest exec on the host is the vm target', onA, 'qm guest exec 200 -- cat /x', vm200, 'cat /x'],
  ['sh -c on the lxc target', lxc101, `sh -c 'cat /x'`, lxc101, 'cat /x'],
  ['sudo + sh -c + pct exec + bash -c', onA, `sudo sh -c "pct exec 101 -- bash -c 'cat /x'"`, lxc101, 'cat /x'],
  ['ssh + sudo + pct exec', onB, `ssh root@10.0.0.6 "sudo pct exec 101 -- cat /x"`, lxc101, 'cat /x'],
  ['sh -c around ssh around sh -c', onA, `sh -c "ssh 10.0.0.7 sh -c \\"'cat /x'\\""`, onB, 'cat /x'],
  ['a redirection on the wrapper is the command’s', onA, 'sudo cat /x > /y', onA, `sh -c 'cat /x >/y'`],
  ['a script of several commands', onA, `sh -c 'cd /x && ls'`, onA, 'cd /x && ls'],
  ['pct exec of a script of several commands', onA, `pct exec 101 -- bash -c 'cd /x; ls'`, lxc101, 'cd /x; ls'],
];

const different: Row[] = [
  ['another command', onA, 'cat /y', onA, 'cat /x'],
  ['another command through sh -c', onA, `sh -c 'cat /y'`, onA, 'cat /x'],
  ['another container', onA, 'pct exec 102 -- cat /x', lxc101, 'cat /x'],
  ['the host, not its container', onA, 'cat /x', lxc101, 'cat /x'],
  ['a container of another host', onB, 'pct exec 101 -- cat /x', lxc101, 'cat /x'],
  ['a VM, not a container with that id', onA, 'qm guest exec 101 -- cat /x', lxc101, 'cat /x'],
  ['another host', onB, 'cat /x', onA, 'cat /x'],
  ['an ssh hop to another host', onA, `ssh 10.0.0.7 'cat /x'`, onA, 'cat /x'],
  ['an unregistered address is its own target', onA, `ssh 10.0.0.99 'cat /x'`, onB, 'cat /x'],
  ['sudo as another user', onA, 'sudo -u postgres cat /x', onA, 'cat /x'],
  ['an ssh hop as another user', onA, `ssh postgres@10.0.0.7 'cat /x'`, onB, 'cat /x'],
  ['a shell script’s positional arguments change it', onA, `sh -c 'cat $1' _ /x`, onA, `sh -c 'cat $1' _ /y`],
  ['variables set before a wrapper may change it', onA, `LC_ALL=C sh -c 'cat /x'`, onA, 'cat /x'],
  ['a negated command', onA, '! cat /x', onA, 'cat /x'],
  ['a command in the background', onA, 'cat /x &', onA, 'cat /x'],
  ['a pipeline is not its first command', onA, 'cat /x | wc -l', onA, 'cat /x'],
  ['redirected elsewhere', onA, 'sudo cat /x > /z', onA, 'cat /x > /y'],
  ['pct exec inside a container is not a hop', lxc101, 'pct exec 101 -- cat /x', lxc101, 'cat /x'],
];

describe('retryIdentity', () => {
  it.each(same)('same: %s', (_name, sentTo, command, sameAs, bare) => {
    expect(id(sentTo, command)).toBe(id(sameAs, bare));
  });

  it.each(different)('different: %s', (_name, sentTo, command, otherTo, other) => {
    expect(id(sentTo, command)).not.toBe(id(otherTo, other));
  });

  it('names an unregistered ssh address as ssh:<address>, and a guest by its host and id', () => {
    expect(id(onA, `ssh 10.0.0.99 'cat /x'`)).toBe('ssh:10.0.0.99\ncat /x');
    expect(id(onA, 'pct exec 101 -- cat /x')).toBe('host:a/lxc/101\ncat /x');
    expect(retryIdentity(onA, `ssh 10.0.0.7 'cat /x'`)).toBe('ssh:10.0.0.7\ncat /x'); // no inventory given
  });

  it('falls back to the normalised text for what it cannot parse or unwrap', () => {
    expect(id(onA, `echo 'unterminated`)).toBe(`host:a\necho 'unterminated`);
    expect(id(onA, 'for f in /a /b; do  cat "$f"; done')).toBe(id(onA, 'for f in /a /b; do cat "$f"; done'));
    expect(id(onA, `sh -c "$(curl -s http://x/y)"`)).not.toBe(id(onA, 'curl -s http://x/y'));
  });
});
