// Reads a remote process table (the /proc/PID/stat lines) and judges one process tree from it: is the command
// still running, stuck in the kernel, or gone. Pure, so the classification is tested without a stuck kernel.
//
// State D alone does not mean stuck: a shell waits in D while a vfork child execs, and a process reading or writing
// a disk sits in D for a moment at a time. 'hung' therefore takes two tables read apart (confirmHung): the same
// process in D in both, with no CPU time spent between them.

import type { LiveState } from '../../ports/executor.ts';

export interface ProcessRow {
  readonly pid: number;
  readonly ppid: number;
  /** The one-letter state: R, S, D (uninterruptible sleep), Z (zombie), T, I, … */
  readonly state: string;
  /** utime + stime in clock ticks; null when the line stops before them. */
  readonly cpuTicks: number | null;
}

/**
 * Parses `cat /proc/[0-9]*\/stat` output. The command name sits in parentheses and may itself hold spaces and
 * parentheses, so the fields after it are found from the last ')'. Lines that do not parse are skipped.
 */
export function parseProcStat(text: string): ProcessRow[] {
  const rows: ProcessRow[] = [];
  for (const line of text.split('\n')) {
    const open = line.indexOf(' (');
    const close = line.lastIndexOf(')');
    if (open <= 0 || close < open) continue;
    const pid = Number(line.slice(0, open));
    const fields = line.slice(close + 1).trim().split(/\s+/);
    const [state, ppidText] = fields;
    const ppid = Number(ppidText);
    if (!Number.isSafeInteger(pid) || !Number.isSafeInteger(ppid) || state === undefined || state.length !== 1) continue;
    // Fields 14 and 15 of the line (utime, stime) are the 12th and 13th after the name.
    const cpuTicks = Number(fields[11]) + Number(fields[12]);
    rows.push({ pid, ppid, state, cpuTicks: Number.isSafeInteger(cpuTicks) ? cpuTicks : null });
  }
  return rows;
}

/** The root and all its descendants that are in the table, root first. */
export function processTree(rows: readonly ProcessRow[], rootPid: number): ProcessRow[] {
  const children = new Map<number, ProcessRow[]>();
  for (const row of rows) {
    const siblings = children.get(row.ppid);
    if (siblings) siblings.push(row);
    else children.set(row.ppid, [row]);
  }
  const root = rows.find((row) => row.pid === rootPid);
  if (!root) return [];
  const tree: ProcessRow[] = [root];
  const seen = new Set([rootPid]);
  for (let i = 0; i < tree.length; i++) {
    for (const child of children.get(tree[i]!.pid) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      tree.push(child);
    }
  }
  return tree;
}

/**
 * One table's look: 'exited' when no process of the tree is alive; 'hung' when a living one is in uninterruptible
 * sleep — which one reading cannot tell from a moment's disk wait, so a 'hung' here is only a reason to read
 * again and ask confirmHung.
 */
export function classifyTree(rows: readonly ProcessRow[], rootPid: number): LiveState {
  const alive = livingTree(rows, rootPid);
  if (alive.length === 0) return 'exited';
  return alive.some((row) => row.state === 'D') ? 'hung' : 'running';
}

/**
 * Two tables read apart: 'hung' only when some process of the tree was in state D in both and spent no CPU time
 * in between (or the tables do not say); 'exited' when the later table has none of the tree alive.
 */
export function confirmHung(before: readonly ProcessRow[], after: readonly ProcessRow[], rootPid: number): LiveState {
  const alive = livingTree(after, rootPid);
  if (alive.length === 0) return 'exited';
  const stuckBefore = new Map(livingTree(before, rootPid).filter((row) => row.state === 'D').map((row) => [row.pid, row.cpuTicks]));
  const stuck = alive.some((row) => {
    if (row.state !== 'D' || !stuckBefore.has(row.pid)) return false;
    const ticksBefore = stuckBefore.get(row.pid) ?? null;
    return ticksBefore === null || row.cpuTicks === null || ticksBefore === row.cpuTicks;
  });
  return stuck ? 'hung' : 'running';
}

function livingTree(rows: readonly ProcessRow[], rootPid: number): ProcessRow[] {
  return processTree(rows, rootPid).filter((row) => row.state !== 'Z' && row.state !== 'X');
}
