// Reads a remote process table (the /proc/PID/stat lines) and judges one process tree from it: is the command
// still running, stuck in the kernel, or gone. Pure, so the classification is tested without a stuck kernel.

import type { LiveState } from '../../commands/execution/executor.ts';

export interface ProcessRow {
  readonly pid: number;
  readonly ppid: number;
  /** The one-letter state: R, S, D (uninterruptible sleep), Z (zombie), T, I, … */
  readonly state: string;
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
    const [state, ppidText] = line.slice(close + 1).trim().split(/\s+/);
    const ppid = Number(ppidText);
    if (!Number.isSafeInteger(pid) || !Number.isSafeInteger(ppid) || state === undefined || state.length !== 1) continue;
    rows.push({ pid, ppid, state });
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

/** 'hung' when any living process of the tree is in uninterruptible sleep; 'exited' when none is alive. */
export function classifyTree(rows: readonly ProcessRow[], rootPid: number): LiveState {
  const alive = processTree(rows, rootPid).filter((row) => row.state !== 'Z' && row.state !== 'X');
  if (alive.length === 0) return 'exited';
  return alive.some((row) => row.state === 'D') ? 'hung' : 'running';
}
