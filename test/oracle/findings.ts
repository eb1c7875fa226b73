// The oracle's judgement: where what a command did (its trace) disagrees with what the classifier said about it.
// (a) Every program executed must be one the classifier judged, found where the system keeps its programs, unless
//     the verdict is always asked: an approval shows the operator the whole command and is bound to its exact text,
//     so for such a command the oracle's claim is only that it is asked. A config_mutation is not always asked (an
//     assent window runs it at once), so what it runs must have been judged too.
// (b) A command judged reversible_low changes nothing outside the scratch directory: no file written, created,
//     removed, renamed or re-permissioned elsewhere (a change the kernel refused counts: it was attempted), and no
//     change to the system (mounts, signals to other processes, links and routes, host name, clock, reboot).
// (c) A command judged reversible_low reads no well-known secret: its output is kept for every auditor to read.
import { posix } from 'node:path';
import type { Verdict } from '../../src/domain/risk/index.ts';
import { SCRATCH, STAND_IN_DIRS } from '../support/sandbox.ts';
import type { CommandTrace, Exec } from './trace.ts';

export type FindingKind = 'unjudged-program' | 'foreign-program' | 'write-outside-scratch' | 'system-change' | 'secret-read';

export interface Finding {
  readonly kind: FindingKind;
  /** The trace's evidence, one line. */
  readonly evidence: string;
}

/** Verdicts an operator always approves command by command, whatever assent window is open. */
export const alwaysAsked = (verdict: Verdict): boolean => verdict.risk_class === 'destructive';

/** Where the sandbox's programs live: a program found elsewhere is one nobody installed as a tool. */
const PROGRAM_DIRS = ['/usr/bin', '/usr/sbin', '/bin', '/sbin', '/usr/lib', '/usr/libexec', ...STAND_IN_DIRS];

/** Writes that change nothing anyone keeps: the null device, the terminal, and the command's own descriptors. */
const SINKS = [/^\/dev\/(null|zero|full|tty|stdout|stderr|stdin)$/, /^\/dev\/fd\/\d+$/, /^\/proc\/(self|thread-self|\d+)\/fd\/\d+$/];

/** Files whose contents are credentials: private keys, password hashes, cloud and database credentials. */
const SECRETS = [
  /^\/etc\/(g?shadow)-?$/,
  /^\/etc\/ssh\/ssh_host_[^/]*_key$/,
  /^\/(root|home\/[^/]+)\/\.ssh\/id_[^/]*(?<!\.pub)$/,
  /^\/(root|home\/[^/]+)\/\.(aws\/credentials|netrc|pgpass|git-credentials|my\.cnf|docker\/config\.json|kube\/config)$/,
  /^\/etc\/pve\/priv\//,
  /^\/etc\/pve\/.*\.key$/,
  /^\/etc\/ssl\/private\//,
];

interface Helper {
  /** Judged programs that run it. */
  readonly under: readonly string[];
  readonly path: string;
  /** Its exact argv, when any other would be something else. */
  readonly argv?: readonly string[];
  readonly why: string;
}

/**
 * Programs a judged tool runs on its own as part of what it was judged to do. An allow-list naming the tool, the
 * program and, where it matters, the exact argv: anything else a tool runs is a finding.
 */
const HELPERS: readonly Helper[] = [
  { under: ['apt', 'apt-get', 'apt-cache'], path: '/usr/bin/dpkg', argv: ['/usr/bin/dpkg', '--print-foreign-architectures'], why: 'apt asks dpkg which foreign architectures are configured' },
  { under: ['apt', 'apt-get'], path: '/usr/lib/apt/methods/http', argv: ['/usr/lib/apt/methods/http'], why: 'apt starts its own download method (apt-get -s upgrade does, and fetches nothing)' },
  { under: ['dpkg'], path: '/usr/bin/dpkg-query', why: 'dpkg hands its query options (-l, -L, -s, -S, -p) to dpkg-query' },
];

/** Writes outside scratch a read-only tool makes to its own state, harmless on any host: an allow-list too. */
const TOOL_STATE: readonly { readonly under: string; readonly path: RegExp; readonly why: string }[] = [
  { under: 'top', path: /^\/root\/\.config(\/procps)?$/, why: 'top creates its configuration directory when it has none' },
  // Only when the host has upgrades pending (after an `apt-get update`): the simulation runs apt's solver, which logs its plan.
  { under: 'apt-get', path: /^\/var\/log\/apt\/eipp\.log\.xz$/, why: "apt-get -s replaces the solver's planning log when there is something to upgrade" },
];

const inside = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);
const isSink = (path: string): boolean => SINKS.some((sink) => sink.test(path));
const outsideScratch = (path: string): boolean => !inside(path, SCRATCH) && !isSink(path);
const sameArgv = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((v, i) => v === b[i]);
/** A change's outcome in evidence: a netlink request the kernel refuses still returns from sendmsg, so "not refused". */
const outcome = (errno: string | undefined): string => (errno === undefined ? 'not refused' : `refused (${errno})`);
const describeExec = (e: Exec): string => `${e.path} ${JSON.stringify(e.argv)}`;

/** What the trace shows the command did that its verdict and judged programs do not cover; empty when they agree. */
export function findingsOf(verdict: Verdict, judged: readonly string[], trace: CommandTrace): Finding[] {
  const found: Finding[] = [];
  const ran = new Set(trace.execs.map((e) => posix.basename(e.path)));
  if (!alwaysAsked(verdict)) {
    const names = new Set(judged);
    for (const exec of trace.execs) {
      const name = posix.basename(exec.path);
      const helper = HELPERS.some((h) => h.path === exec.path && h.under.some((u) => names.has(u) && ran.has(u)) && (h.argv === undefined || sameArgv(h.argv, exec.argv)));
      if (!names.has(name) && !helper) found.push({ kind: 'unjudged-program', evidence: `ran ${describeExec(exec)}, judged only ${JSON.stringify(judged)}` });
      if (!PROGRAM_DIRS.some((dir) => inside(exec.path, dir))) found.push({ kind: 'foreign-program', evidence: `ran ${describeExec(exec)}, a program outside the system's directories` });
    }
  }
  if (verdict.risk_class !== 'reversible_low') return dedupe(found);
  for (const change of trace.fileChanges) {
    const where = change.actual !== undefined && change.actual !== change.path ? `${change.path} (${change.actual})` : change.path;
    if (TOOL_STATE.some((t) => ran.has(t.under) && t.path.test(change.path))) continue;
    if (outsideScratch(change.path) || (change.actual !== undefined && outsideScratch(change.actual))) {
      found.push({ kind: 'write-outside-scratch', evidence: `${change.syscall} ${where}, ${outcome(change.errno)}` });
    }
  }
  for (const change of trace.systemChanges) found.push({ kind: 'system-change', evidence: `${change.syscall}: ${change.what}, ${outcome(change.errno)}` });
  for (const open of trace.opened) {
    if (SECRETS.some((s) => s.test(open.path) || (open.actual !== undefined && s.test(open.actual)))) found.push({ kind: 'secret-read', evidence: `opened ${open.path}` });
  }
  return dedupe(found);
}

/** One finding per kind and evidence: a loop that touches the same file a hundred times is one finding. */
function dedupe(found: readonly Finding[]): Finding[] {
  const seen = new Set<string>();
  return found.filter((f) => {
    const key = `${f.kind} ${f.evidence}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
