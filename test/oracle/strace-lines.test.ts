// Reading strace's text: lines as strace 6 writes them with `-f -yy -X raw` (copied from real traces).
import { describe, expect, it } from 'vitest';
import { annotatedPath, stringArg, stringArray, syscallRecords, unescape } from './strace-lines.ts';

describe("strace's text", () => {
  it("joins a call another process's line split, and keeps the order calls began in", () => {
    const records = syscallRecords([
      '3912  vfork( <unfinished ...>',
      '3913  execve("/usr/bin/touch", ["touch", "f"], 0x55be7093c718 /* 3 vars */ <unfinished ...>',
      '3912  <... vfork resumed>)              = 3',
      '3912  --- SIGCHLD {si_signo=17, si_code=0x1, si_pid=4, si_status=0} ---',
      '3913  <... execve resumed>)             = 0',
      '3913  openat(-100</scratch>, "f", 0x941, 0666) = -1 EROFS (Read-only file system)',
      '3913  +++ exited with 1 +++',
    ].join('\n'));
    expect(records.map((r) => [r.pid, r.name, r.ret, r.errno])).toEqual([
      [3912, 'vfork', '3', undefined],
      [3913, 'execve', '0', undefined],
      [3913, 'openat', '-1 EROFS (Read-only file system)', 'EROFS'],
    ]);
    expect(stringArray(records[1]?.args[1])).toEqual(['touch', 'f']);
  });

  it('keeps a call its process died in, without a result', () => {
    const [record] = syscallRecords('77  openat(-100</scratch>, "x", 0x241, 0666 <unfinished ...>\n77  +++ killed by SIGKILL +++');
    expect([record?.name, record?.ret, stringArg(record?.args[1])]).toEqual(['openat', '?', 'x']);
  });

  it('decodes escapes in strings, octal and hex bytes as UTF-8', () => {
    expect(stringArg('"a\\"b\\\\c\\n\\t"')).toBe('a"b\\c\n\t');
    expect(unescape('\\303\\251t\\xc3\\xa9')).toBe('été');
    expect(stringArray('["sh", "-c", "echo \\"x, y\\" [z]"]')).toEqual(['sh', '-c', 'echo "x, y" [z]']);
  });

  it("reads the path beside a descriptor, nested device notes and escaped brackets included, and nothing that is no file", () => {
    expect(annotatedPath('-100</scratch>')).toBe('/scratch');
    expect(annotatedPath('3</dev/null<char 1:3>>')).toBe('/dev/null');
    expect(annotatedPath('3</tmp/q\\76\\"x>')).toBe('/tmp/q>"x');
    expect(annotatedPath('4<NETLINK:[73199]>')).toBeUndefined();
    expect(annotatedPath('5<pipe:[12]>')).toBeUndefined();
    expect(annotatedPath('0x241')).toBeUndefined();
  });

  it('splits arguments only at top-level commas', () => {
    const [record] = syscallRecords('9  sendto(3<NETLINK:[1]>, [{nlmsg_len=32, nlmsg_type=0x10, nlmsg_flags=0x5, nlmsg_seq=0, nlmsg_pid=0}, "\\x00, x"], 32, 0, NULL, 0) = 32');
    expect(record?.args).toHaveLength(6);
    expect(record?.args[2]).toBe('32');
  });
});
