// The parser wrapper: word values after quote removal, run-time-only words, redirections and flattened nesting.
import { describe, expect, it } from 'vitest';
import { parseShell } from '../../../src/domain/risk/parse.ts';

function commands(src: string) {
  const parsed = parseShell(src);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.commands;
}

describe('parseShell', () => {
  it('removes quotes and escapes from literal words', () => {
    const [cmd] = commands(`echo 'a b' "c\\"d" e\\ f g"h"'i' "\\z"`);
    expect(cmd?.argv.map((w) => w.value)).toEqual(['echo', 'a b', 'c"d', 'e f', 'ghi', '\\z']);
  });

  it('marks words with expansions as unknown but keeps their literal prefix', () => {
    const [cmd] = commands('curl "http://$HOST/x" $OPTS');
    expect(cmd?.argv.map((w) => [w.value, w.prefix])).toEqual([['curl', 'curl'], [undefined, 'http://'], [undefined, '']]);
  });

  it('flattens lists, pipelines, blocks and substitutions into simple commands', () => {
    const names = commands('a | b && { c; (d $(e)); } || if f; then g; fi').map((c) => c.argv[0]?.value);
    expect(names).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
  });

  it('keeps redirections with their operator, descriptor and target', () => {
    const [cmd] = commands('ls 2>&1 > /tmp/x');
    expect(cmd?.redirects.map((r) => [r.fd, r.op, r.target.value])).toEqual([['2', '>&', '1'], [undefined, '>', '/tmp/x']]);
  });

  it('keeps redirections of a compound command as a command without argv, told apart from a bare redirection', () => {
    expect(commands('{ ls; } > /tmp/l').map((c) => [c.argv.length, c.redirects.length, c.compound])).toEqual([[0, 1, true], [1, 0, false]]);
    expect(commands('> /tmp/l').map((c) => [c.argv.length, c.redirects.length, c.compound])).toEqual([[0, 1, false]]);
  });

  it('returns the syntax error instead of throwing', () => {
    expect(parseShell("echo 'x")).toEqual({ ok: false, error: expect.stringContaining('quote') });
  });
});
