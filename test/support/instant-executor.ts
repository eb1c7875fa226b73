// A fleet stand-in for tests where SSH is not under test: every command "runs" at once, exits 0 and prints
// `<prefix> <command>`; `started` lists what it was asked to run, so a test can assert that nothing ran.
import type { Executor } from '../../src/ports/executor.ts';

export const STAND_IN_HOST_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl';

export function instantExecutor(prefix = 'ran'): Executor & { readonly started: string[] } {
  const started: string[] = [];
  return {
    started,
    start: (_target, command) => {
      started.push(command);
      return Promise.resolve({
        hostKey: STAND_IN_HOST_KEY,
        result: Promise.resolve({ exitCode: 0, signal: null, stdoutTail: `${prefix} ${command}\n`, stderrTail: '', timedOut: false }),
        output: () => ({ stdout: '', stderr: '' }),
        idleMs: () => 0,
        probe: () => Promise.resolve('exited' as const),
        kill: () => Promise.resolve(),
      });
    },
    close: () => Promise.resolve(),
  };
}
