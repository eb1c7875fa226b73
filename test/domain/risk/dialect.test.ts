// The constructs dash reads differently from the classifier's parser, and the wrappers that run another program, as
// classes: each construct is generated around a set of destructive and mutating payloads, then laid out with other
// whitespace, separators and newlines, nested in substitutions, subshells and groups, and handed to `sh -c`,
// `bash -c` and wrappers. No variant may classify below what its payload gets when run directly.
import { describe, expect, it } from 'vitest';
import type { RiskClass } from '../../../src/domain/risk/index.ts';
import { RISK_CLASSES, classify } from '../../../src/domain/risk/index.ts';

const severity = (risk: RiskClass): number => RISK_CLASSES.indexOf(risk);
const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** What a construct wraps: commands that lose data or change the host. */
const PAYLOADS = [
  'rm -rf /srv/x',
  'qm destroy 100',
  'dd if=/dev/zero of=/dev/sda',
  'iptables -F',
  'zfs destroy -r tank/data',
  'touch /root/x',
  'systemctl restart nginx',
] as const;

type Construct = (payload: string) => readonly string[];

/** Each dialect construct, written several ways around a payload that dash (or bash) would run. */
const CONSTRUCTS: Readonly<Record<string, Construct>> = {
  alias: (p) => [`alias ls=${quote(p)}\nls`, `alias ls=${quote(p)}; ls`, `alias ls=${quote(p)} && ls`, `unalias ls; ${p}`, `alias -p; ${p}`],
  trap: (p) => [`trap ${quote(p)} EXIT`, `trap ${quote(p)} INT TERM; sleep 1`, `trap -- ${quote(p)} 0`],
  arithmetic: (p) => [`((${p}))`, `(( ${p} ))`, `let x=1; ${p}`, `let "x = 1" && ${p}`, `((x++)) || ${p}`],
  // Bash evaluates a value as arithmetic in these places, running a[$(…)] in it; the classifier sees only a literal.
  'arithmetic on names': (p) => [
    `bash -c ${quote(`x='a[$(${p})]'; echo $((x))`)}`,
    `bash -c ${quote(`x='a[$(${p})]'; a=(1); echo \${a[x]}`)}`,
    `bash -c ${quote(`x='a[$(${p})]'; [[ $x -eq 1 ]]`)}`,
    `bash -c ${quote(`x='a[$(${p})]'; declare -i y=x`)}`,
    `bash -c ${quote(`x='a[$(${p})]'; s=abc; echo \${s:x}`)}`,
  ],
  function: (p) => [`f() { ${p}; }; f`, `f () { ${p}; }\nf`, `function f { ${p}; }; f`, `ls() { ${p}; }; ls`, `f() ( ${p} ); f`, `f() { ${p}; }`],
  'comment continuation': (p) => [`uptime # \\\n${p}`, `ls # a note \\\n${p}`, `# \\\n${p}`, `uptime #\\\n${p}`],
  "$'…' quoting": (p) => [`echo $'\\' ; ${p} ; #'`, `echo $"x"; ${p}`, `echo $'a'\n${p}`],
  'brace expansion': (p) => [`{${p.split(' ').join(',')}}`, `echo {a,b}; ${p}`, `bash -c ${quote(`{${p.split(' ').join(',')}}`)}`],
  'unknown builtins': (p) => [`builtin ${p}`, `command ${p}`, `command -p ${p}`, `exec ${p}`, `eval ${quote(p)}`, `ulimit -n 64; ${p}`, `enable -n echo; ${p}`, `set -o posix; ${p}`, `hash -r; ${p}`],
  'here-documents': (p) => [
    `sh <<EOF\n${p}\nEOF`,
    `sh <<'EOF'\n${p}\nEOF`,
    `sh <<-EOF\n\t${p}\n\tEOF`,
    `sh <<-EOF\n\tcat <<X\n\tX\n\t${p}\nX\n\tEOF`,
    `sh <<-'EOF'\n\tcat <<X\n\tX\n\t${p}\nX\n\tEOF`,
    `sh <<EOF\necho \\"; ${p}; #"\nEOF`,
    `sh <<'EOF'\necho \\"; ${p}; #"\nEOF`,
    `sh <<EOF\n${p.slice(0, 1)}\\\n${p.slice(1)}\nEOF`,
    `cat <<EOF\n$(${p})\nEOF`,
    `cat <<EOF\n\\\\$(${p})\nEOF`,
    `cat <<EOF\n\`${p}\`\nEOF`,
    `bash <<EOF\n${p}\nEOF`,
    `sh -s <<EOF\n${p}\nEOF`,
  ],
  wrappers: (p) => [
    `ip netns exec blue ${p}`,
    `ip -all netns exec ${p}`,
    `ip netns e blue ${p}`,
    `ip -force netns exec blue ${p}`,
    `ip -n blue netns exec red ${p}`,
    `chrt 10 ${p}`,
    `chrt -f 10 ${p}`,
    `chrt --rr 5 ${p}`,
    `chrt -o ${p}`,
    `chrt --sched-runtime 10 -d 0 ${p}`,
    `chrt --frob 10 ${p}`,
    `taskset 0x1 ${p}`,
    `taskset -c 0-3 ${p}`,
    `taskset --cpu-list 1 ${p}`,
    `flock /run/lock/x ${p}`,
    `flock -w 5 /run/lock/x ${p}`,
    `flock --timeout=5 -n /run/lock/x ${p}`,
    `flock /run/lock/x -c ${quote(p)}`,
    `flock -x /run/lock/x --command ${quote(p)}`,
    `flock -Z /run/lock/x ${p}`,
    `ionice -c3 ${p}`,
    `ionice -c 2 -n 7 ${p}`,
    `nice ${p}`,
    `nice -n 5 ${p}`,
    `nice -5 ${p}`,
    `nice --adj 5 ${p}`,
    `timeout 5 ${p}`,
    `timeout -k 5 10 ${p}`,
    `timeout --kill 5 10 ${p}`,
    `timeout --sig=KILL 10 ${p}`,
    `timeout --frobnicate 5 ${p}`,
    `env ${p}`,
    `env - ${p}`,
    `env -i A=1 ${p}`,
    `env -u HOME ${p}`,
    `env -S ${quote(p)}`,
    `nohup ${p}`,
    `setsid ${p}`,
    `setsid -f ${p}`,
    `stdbuf -oL ${p}`,
    `stdbuf --out L ${p}`,
    `xargs ${p}`,
    `xargs -l ${p}`,
    `xargs -0 -n1 ${p}`,
    `xargs -I{} ${p}`,
    `xargs --max-lines ${p}`,
    `ip vrf exec blue ${p}`,
    `sudo --us root ${p}`,
    `nsenter --targ 1 -m ${p}`,
    `systemd-run --uni x ${p}`,
    `numactl -N 0 ${p}`,
    `setpriv --reuid 1000 ${p}`,
    `prlimit --nofile=10 ${p}`,
    `script -qc ${quote(p)} /dev/null`,
    `sg adm -c ${quote(p)}`,
    `tmux new -d ${quote(p)}`,
    `screen -dm ${p}`,
    `start-stop-daemon --start --exec /usr/bin/env -- ${p}`,
  ],
};

/** Layouts of a command: whitespace, separators, newlines, nesting, shells and wrappers that run a script. */
const LAYOUTS: readonly ((c: string) => string)[] = [
  (c) => c,
  (c) => `\t ${c} \t`,
  (c) => `true; ${c}`,
  (c) => `true;${c}`,
  (c) => `true && ${c}`,
  (c) => `false || ${c}`,
  (c) => `true | ${c}`,
  (c) => `true\n${c}`,
  (c) => `\n\n${c}\n`,
  (c) => `${c}\ntrue`,
  (c) => `${c} & wait`,
  (c) => `(${c})`,
  (c) => `{ ${c}\n}`,
  (c) => `echo "$(${c})"`,
  (c) => `echo $( ${c} )`,
  (c) => `if true; then ${c}\nfi`,
  (c) => `for i in 1; do ${c}\ndone`,
  (c) => `sh -c ${quote(c)}`,
  (c) => `bash -c ${quote(c)}`,
  (c) => `sudo sh -c ${quote(c)}`,
  (c) => `pct exec 101 -- bash -c ${quote(c)}`,
  (c) => `ssh root@pve ${quote(c)}`,
  (c) => `timeout 5 sh -c ${quote(c)}`,
  (c) => `chrt 10 sh -c ${quote(c)}`,
  (c) => `taskset 1 bash -c ${quote(c)}`,
  (c) => `flock /run/lock/x -c ${quote(c)}`,
  (c) => `ip netns exec blue sh -c ${quote(c)}`,
  (c) => `env -i sh -c ${quote(c)}`,
];

interface Miss {
  readonly command: string;
  readonly got: RiskClass;
  readonly needs: RiskClass;
}

/**
 * Every payload in every way a construct is written, in every layout; a construct written in many ways (the
 * wrappers) takes the plain layout and six others in turn, so that all layouts are covered without taking minutes.
 */
function misses(construct: Construct): Miss[] {
  const found: Miss[] = [];
  let turn = 0;
  for (const payload of PAYLOADS) {
    const needs = classify(payload).risk_class;
    const forms = construct(payload);
    for (const written of forms) {
      const layouts = forms.length <= 12 ? LAYOUTS : [LAYOUTS[0], ...Array.from({ length: 6 }, () => LAYOUTS[1 + (turn++ % (LAYOUTS.length - 1))])];
      for (const layout of layouts) {
        if (layout === undefined) continue;
        const command = layout(written);
        const got = classify(command).risk_class;
        if (severity(got) < severity(needs)) found.push({ command, got, needs });
      }
    }
  }
  return found;
}

describe('dialect constructs and wrappers, generated around destructive payloads', () => {
  it('the payloads themselves are not read-only, and the worst of them is destructive', () => {
    const classes = PAYLOADS.map((p) => classify(p).risk_class);
    expect(classes.filter((c) => c === 'reversible_low')).toEqual([]);
    expect(classes).toContain('destructive');
  });

  it.each(Object.keys(CONSTRUCTS).map((name) => [name]))('%s: no variant classifies below its payload', (name) => {
    const construct = CONSTRUCTS[name];
    if (construct === undefined) throw new Error(name);
    expect(misses(construct)).toEqual([]);
    // Thousands of classifications each; the machine is shared.
  }, 120_000);

  it('the dialect constructs fail closed as destructive even around a read-only command', () => {
    const reads = ['ls', 'cat f'];
    const worst = (c: string): RiskClass => classify(c).risk_class;
    const commands = reads.flatMap((r) => [
      `alias x=${quote(r)}\nx`, `trap ${quote(r)} EXIT`, `((${r}))`, `let x=1; ${r}`, `f() { ${r}; }; f`, `${r} # \\\nid`,
      `echo $'a' ; ${r}`, `bash -c ${quote(`{${r.replace(' ', ',')},x}`)}`, `echo $((n)); ${r}`, `[[ $n -eq 1 ]] && ${r}`, `builtin ${r}`, `timeout "$T" 5 ${r}`,
    ]);
    expect(commands.filter((c) => worst(c) !== 'destructive')).toEqual([]);
  });

  it('a wrapper given an option the classifier does not know is at least a mutation around a read-only command', () => {
    const commands = ['timeout --frobnicate 5 ls', 'nice --bogus ls', 'chrt --frob 10 ls', 'taskset --frob 1 ls', 'flock -Z /run/lock/x ls', 'ionice --frob 3 ls', 'stdbuf --frob L ls', 'setsid --frob ls', 'env --frob ls', 'xargs --frob ls', 'nohup --frob ls', 'ip -force netns exec blue ls'];
    expect(commands.filter((c) => classify(c).risk_class === 'reversible_low')).toEqual([]);
  });

  it('the wrappers stay transparent around a read-only command when their options are known', () => {
    const commands = ['ip netns exec blue ls', 'chrt -f 10 ls', 'taskset -c 0 ls', 'flock -w 5 /run/lock/x ls', 'flock /run/lock/x -c ls', 'ionice -c3 ls', 'nice -n 5 ls', 'timeout -k 5 10 ls', 'env -i ls', 'nohup ls', 'setsid -w ls', 'stdbuf -oL ls'];
    expect(commands.filter((c) => classify(c).risk_class !== 'reversible_low')).toEqual([]);
  });
});
