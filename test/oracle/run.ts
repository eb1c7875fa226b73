// Runs many commands through sandbox batches in parallel and reads back each command's trace and outcome.
//
// Resetting the scratch directory, HOME and /tmp costs several times what most commands cost, so a batch resets only
// after a command expected to change them. The expectation is only a schedule: the trace says which commands did
// change anything, and a command that ran after an unexpected change (on another state than the templates) runs again,
// this time after a reset. Every result kept ran on the fresh templates.
import type { CommandOutcome, Sandbox } from '../support/sandbox.ts';
import { SCRATCH } from '../support/sandbox.ts';
import type { CommandTrace } from './trace.ts';
import { commandTraces } from './trace.ts';

export interface Ran {
  readonly trace: CommandTrace;
  readonly outcome: CommandOutcome;
}

export interface RunOptions {
  /** Batches running at once. */
  readonly concurrency: number;
  /** Commands per batch: a sandbox costs as much to start as a few commands cost to run. */
  readonly batchSize: number;
  readonly limitSeconds: number;
  /** A first guess at which commands change files; a wrong guess costs a second run, never a wrong result. */
  readonly mayChange: (command: string) => boolean;
}

// What the sandbox lets commands change; /dev is a tmpfs too (`echo x > /dev/sda` creates a file there).
const WRITABLE = [SCRATCH, '/root', '/tmp', '/var/tmp', '/run', '/dev'];
const RESET_EVERY = 6;
const SINKS = /^\/dev\/(null|zero|full|tty|stdout|stderr)$|^\/dev\/fd\//;

/** True when the command changed something a later command in the same sandbox would see. */
function leftChanges(trace: CommandTrace): boolean {
  return trace.fileChanges.some((c) => c.errno === undefined && !SINKS.test(c.path) && WRITABLE.some((dir) => c.path === dir || c.path.startsWith(`${dir}/`)));
}

/** Each command's trace and outcome, every one from the fresh templates. */
export async function runAll(sandbox: Sandbox, commands: readonly string[], options: RunOptions): Promise<Map<string, Ran>> {
  const results = new Map<string, Ran>();
  // What each command is expected to change: the guess at first, what its trace showed once it ran.
  const changes = new Map<string, boolean>(commands.map((c) => [c, options.mayChange(c)]));
  const expectChange = (command: string): boolean => changes.get(command) ?? true;
  let pending = [...new Set(commands)];
  // Later rounds know from the trace which commands change files; a command a dead batch never started runs again.
  for (let round = 0; round < 3 && pending.length > 0; round++) {
    const rerun: string[] = [];
    // Interleaved, so that slow commands (the ones that use their whole time limit) spread over the batches; in each
    // batch the commands expected to change nothing go first, sharing one reset.
    const count = Math.max(1, Math.ceil(pending.length / options.batchSize));
    const queue = Array.from({ length: count }, (_, b) => pending.filter((_, i) => i % count === b).sort((x, y) => Number(expectChange(x)) - Number(expectChange(y))));
    const worker = async (): Promise<void> => {
      for (let batch = queue.shift(); batch !== undefined; batch = queue.shift()) {
        // A wrong guess spoils at most the commands up to the next reset: one comes every RESET_EVERY commands anyway.
        const fresh = batch.map((_, i) => i % RESET_EVERY === 0 || expectChange(batch[i - 1] ?? ''));
        const ran = await sandbox.runBatch(batch, { limitSeconds: options.limitSeconds, fresh });

        let dirty = false;
        commandTraces(ran.trace, batch).forEach((trace, i) => {
          if (fresh[i] === true) dirty = false;
          const outcome = ran.outcomes[i];
          if (!trace.started || outcome === undefined || dirty) rerun.push(trace.command);
          else results.set(trace.command, { trace, outcome });
          if (trace.started) changes.set(trace.command, leftChanges(trace));
          dirty ||= !trace.started || leftChanges(trace);
        });
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));

    pending = rerun;
  }
  return results;
}
