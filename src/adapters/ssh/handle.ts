// One running remote command: its bounded output, the PID its wrapper reported, and the probes and kills that
// look at that PID through further exec channels on the same host.

import type { ClientChannel } from 'ssh2';
import type { ExecHandle, ExecResult, LiveState } from '../../ports/executor.ts';
import { classifyTree, confirmHung, parseProcStat, processTree } from './process-tree.ts';
import { decodeQmExec } from './qm.ts';
import { guestKillLine, killLine, processTableLine, type RemoteTarget } from './remote-command.ts';
import { PidMarkerFilter, Tail } from './tail.ts';

/** Runs a short control command (probe, kill) on the same host and returns its stdout. */
export type RunControl = (line: string) => Promise<string>;

export interface HandleOptions {
  readonly target: RemoteTarget;
  readonly hostKey: string;
  readonly tailBytes: number;
  /** `qm guest exec` prints the whole guest output as one JSON document at the end; this bounds what is held. */
  readonly qmOutputLimitBytes: number;
  readonly hardLimitMs: number;
  readonly runControl: RunControl;
}

/** How long a kill waits for the remote end to report the exit before it closes the channel itself. */
const EXIT_REPORT_GRACE_MS = 2000;
/** How long probe and kill wait for the wrapper's PID line. */
const PID_WAIT_MS = 2000;
/** A tree seen in state D is read again this much later; only a process still in D, idle on the CPU, is hung. */
const HUNG_CONFIRM_MS = 1000;
/** Kill rounds: a process forked while the table was read is caught by the next round. */
const KILL_ROUNDS = 3;
/** However the host answers, a kill closes the channel after this long, so the result always settles. */
const KILL_TREE_BUDGET_MS = 15_000;

interface Ending {
  exitCode: number | null;
  signal: string | null;
}

export class SshExecHandle implements ExecHandle {
  readonly hostKey: string;
  readonly result: Promise<ExecResult>;

  private readonly stdout: Tail;
  private readonly stderr: Tail;
  private readonly stderrFilter: PidMarkerFilter;
  /** vm targets only: the raw qm JSON, bounded. */
  private qmJson: Buffer[] = [];
  private qmJsonBytes = 0;
  private lastOutputAt = Date.now();
  private pid: number | null = null;
  private readonly pidKnown: Promise<void>;
  private ending: Ending | null = null;
  private closed = false;
  private readonly closedPromise: Promise<void>;
  private killRequested = false;
  private timedOut = false;
  private readonly hardLimit: NodeJS.Timeout;

  constructor(
    private readonly channel: ClientChannel,
    private readonly options: HandleOptions,
  ) {
    this.hostKey = options.hostKey;
    this.stdout = new Tail(options.tailBytes);
    this.stderr = new Tail(options.tailBytes);
    let onPid: () => void = () => undefined;
    let onClose: () => void = () => undefined;
    this.pidKnown = new Promise((resolve) => (onPid = resolve));
    this.closedPromise = new Promise((resolve) => (onClose = resolve));
    this.stderrFilter = new PidMarkerFilter(
      (pid) => {
        this.pid = pid;
        onPid();
      },
      (chunk) => this.printed(this.stderr, chunk),
    );

    channel.on('data', (chunk: Buffer) => this.onStdout(chunk));
    channel.stderr.on('data', (chunk: Buffer) => this.stderrFilter.push(chunk));
    // The exit report is read from the close event, which ssh2 passes the same arguments as 'exit', and not from
    // 'exit': that fires once, as the report is parsed, and a command that ended before its channel reached this
    // handle (its output, exit status and close read from the socket in one go) has reported before anyone listened.
    // 'close' waits until the output is read, so it always comes after these listeners.
    channel.once('close', (...report: unknown[]) => {
      this.ending = endingOf(report[0], report[1]);
      this.closed = true;
      this.stderrFilter.flush();
      onPid();
      onClose();
    });
    // Nothing is ever sent on stdin: a command that reads it sees end of file instead of waiting forever.
    channel.end();

    // A vm command is bounded by qm's own --timeout first (which reports the guest PID); this is the backstop.
    const limit = options.target.kind === 'vm' ? options.hardLimitMs + 5000 : options.hardLimitMs;
    this.hardLimit = setTimeout(() => {
      this.timedOut = true;
      void this.kill();
    }, limit);
    this.result = this.settle();
  }

  output(): { stdout: string; stderr: string } {
    return { stdout: this.stdout.text(), stderr: this.stderr.text() };
  }

  idleMs(): number {
    return Date.now() - this.lastOutputAt;
  }

  async probe(): Promise<LiveState> {
    const pid = await this.livePid();
    if (pid === null) return this.closed ? 'exited' : 'running';
    const first = parseProcStat(await this.options.runControl(processTableLine(this.options.target)));
    if (this.closed) return 'exited';
    const glance = classifyTree(first, pid);
    if (glance !== 'hung') return glance;
    await Promise.race([this.closedPromise, delay(HUNG_CONFIRM_MS)]);
    if (this.closed) return 'exited';
    const second = parseProcStat(await this.options.runControl(processTableLine(this.options.target)));
    if (this.closed) return 'exited';
    return confirmHung(first, second, pid);
  }

  async kill(): Promise<void> {
    if (this.closed) return;
    this.killRequested = true;
    // The host may be unreachable or too stuck to answer; closing the channel below still ends the command for us.
    await Promise.race([this.killTree().catch(() => undefined), delay(KILL_TREE_BUDGET_MS)]);
    await Promise.race([this.closedPromise, delay(EXIT_REPORT_GRACE_MS)]);
    if (!this.closed) {
      // Ask sshd to signal the session too (OpenSSH 7.9+ honours it), then stop waiting for it.
      try {
        this.channel.signal('KILL');
      } catch {
        // The channel is already closing.
      }
      this.channel.close();
      await this.closedPromise;
    }
  }

  private onStdout(chunk: Buffer): void {
    if (this.options.target.kind !== 'vm') {
      this.printed(this.stdout, chunk);
      return;
    }
    if (this.qmJsonBytes + chunk.length <= this.options.qmOutputLimitBytes) this.qmJson.push(chunk);
    this.qmJsonBytes += chunk.length;
  }

  private printed(tail: Tail, chunk: Buffer): void {
    tail.push(chunk);
    this.lastOutputAt = Date.now();
  }

  /** The PID while the command is running, or null once it ended (a PID seen before may belong to another now). */
  private async livePid(): Promise<number | null> {
    await Promise.race([this.pidKnown, delay(PID_WAIT_MS)]);
    return this.closed ? null : this.pid;
  }

  private async killTree(): Promise<void> {
    for (let round = 0; round < KILL_ROUNDS; round++) {
      const pid = await this.livePid();
      if (pid === null) return;
      const tree = processTree(parseProcStat(await this.options.runControl(processTableLine(this.options.target))), pid)
        .filter((row) => row.state !== 'Z')
        .map((row) => row.pid);
      if (tree.length === 0 || this.closed) return;
      await this.options.runControl(killLine(this.options.target, tree));
    }
  }

  private async settle(): Promise<ExecResult> {
    await this.closedPromise;
    clearTimeout(this.hardLimit);
    const ending = this.killedEnding() ?? this.ending ?? { exitCode: null, signal: null };
    if (this.options.target.kind === 'vm' && !this.killRequested) return this.settleVm(this.options.target.pveId, ending);
    return { ...ending, stdoutTail: this.stdout.text(), stderrTail: this.stderr.text(), timedOut: this.timedOut };
  }

  /**
   * After our kill, the ending as the kill caused it: no exit report at all (the channel was closed first), or a
   * program in between (pct's lxc-attach) that turned the signal into exit status 128 + 9.
   */
  private killedEnding(): Ending | null {
    if (!this.killRequested) return null;
    if (this.ending === null || (this.ending.exitCode === 128 + 9 && this.ending.signal === null)) return { exitCode: null, signal: 'SIGKILL' };
    return null;
  }

  /** Replaces qm's own exit with the guest command's, decoded from the JSON qm printed. */
  private async settleVm(pveId: number, qmEnding: Ending): Promise<ExecResult> {
    const raw = Buffer.concat(this.qmJson);
    const tails = (): Pick<ExecResult, 'stdoutTail' | 'stderrTail'> => ({ stdoutTail: this.stdout.text(), stderrTail: this.stderr.text() });
    if (this.qmJsonBytes > this.options.qmOutputLimitBytes) {
      this.stderr.push(Buffer.from(`\n[nomos: qm guest exec printed more than ${this.options.qmOutputLimitBytes} bytes; output dropped]\n`));
      return { ...qmEnding, ...tails(), timedOut: this.timedOut };
    }
    const outcome = decodeQmExec(raw.toString('utf8'));
    switch (outcome.kind) {
      case 'exited':
        this.stdout.push(Buffer.from(outcome.stdout));
        this.stderr.push(Buffer.from(outcome.stderr));
        if (outcome.stdout.length > 0 || outcome.stderr.length > 0) this.lastOutputAt = Date.now();
        return { exitCode: outcome.exitCode, signal: outcome.signal, ...tails(), timedOut: this.timedOut };
      case 'running': {
        // qm stopped waiting at its --timeout, which is the hard limit: the command still runs in the guest.
        let signal: string | null = null;
        try {
          const killed = decodeQmExec(await this.options.runControl(guestKillLine(pveId, outcome.pid)));
          if (killed.kind === 'exited' && killed.exitCode === 0) signal = 'SIGKILL';
        } catch {
          // Best effort: the guest agent may not answer; the result still says the command timed out.
        }
        return { exitCode: null, signal, ...tails(), timedOut: true };
      }
      case 'unreadable':
        this.stdout.push(raw);
        this.stderr.push(Buffer.from(`\n[nomos: ${outcome.reason}]\n`));
        return { ...qmEnding, ...tails(), timedOut: this.timedOut };
      default: {
        const never: never = outcome;
        return never;
      }
    }
  }
}

/** The exit report as the close event carries it: (code) or (null, signal name); nothing when none came. */
function endingOf(code: unknown, signal: unknown): Ending | null {
  if (typeof code === 'number') return { exitCode: code, signal: null };
  if (code === null && typeof signal === 'string') return { exitCode: null, signal: signal.startsWith('SIG') ? signal : `SIG${signal}` };
  return null;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
