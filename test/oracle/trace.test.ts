// What the oracle reads from a real trace: each command of a sandbox batch gets the programs it ran, the changes it
// attempted (paths made absolute against its working directory and descriptors, refusals kept), the system changes
// it attempted, and what it opened; nothing of its batch-mates' and nothing of the driver's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../support/sandbox.ts';
import { openSandbox, sandboxProblem } from '../support/sandbox.ts';
import type { CommandTrace } from './trace.ts';
import { commandTraces } from './trace.ts';

const problem = sandboxProblem();

describe.skipIf(problem !== undefined)(`a command's trace${problem === undefined ? '' : ` (skipped: ${problem})`}`, () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await openSandbox();
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  async function traced(commands: readonly string[], fresh: 'each' | readonly boolean[] = 'each'): Promise<CommandTrace[]> {
    const batch = await sandbox.runBatch(commands, { limitSeconds: 5, fresh });
    return commandTraces(batch.trace, commands);
  }
  const changed = (trace: CommandTrace | undefined): string[] => (trace?.fileChanges ?? []).map((c) => `${c.syscall} ${c.path}${c.errno === undefined ? '' : ` ${c.errno}`}`);

  it('lists every program run, with its argv, and not the `sh -c` that runs the command', async () => {
    const command = 'ls | wc -l; echo "$(id -u)"; env [ 1 = 1 ]';
    const [trace] = await traced([command]);
    expect(trace?.started).toBe(true);
    const runs = (trace?.execs ?? []).map((e) => [e.path, ...e.argv].join(' ')).sort();
    expect(runs).toEqual(['/usr/bin/[ [ 1 = 1 ]', '/usr/bin/env env [ 1 = 1 ]', '/usr/bin/id id -u', '/usr/bin/ls ls', '/usr/bin/wc wc -l']);
  });

  it('resolves paths against the working directory and directory descriptors, odd characters and all', async () => {
    const command = 'mkdir -p d/e && cd d && touch "we\\"ird>name é" && (cd e; touch rel) && rm -r /scratch/d/e && mv "we\\"ird>name é" ../moved';
    const [trace] = await traced([command]);
    const odd = '/scratch/d/we"ird>name é';
    expect(changed(trace)).toEqual(expect.arrayContaining([
      'mkdir /scratch/d', 'mkdir /scratch/d/e', `openat ${odd}`, `utimensat ${odd}`, 'openat /scratch/d/e/rel',
      'unlinkat /scratch/d/e/rel', 'unlinkat /scratch/d/e', `renameat2 ${odd}`, 'renameat2 /scratch/moved',
    ]));
  });

  it('keeps a change the kernel refused, with its error', async () => {
    const [trace] = await traced(['touch /etc/oracle-refused; mkdir /usr/oracle-refused']);
    expect(changed(trace)).toEqual(expect.arrayContaining(['openat /etc/oracle-refused EROFS', 'mkdir /usr/oracle-refused EROFS']));
  });

  it('records signals to other processes and netlink changes, not probes, dumps or signals to its own processes', async () => {
    const [trace] = await traced(['kill -0 1; sleep 5 & kill $!; ip addr >/dev/null; ss -t >/dev/null; ip link set lo down; kill -TERM 1']);
    expect(trace?.systemChanges.map((c) => c.what)).toEqual(['netlink request type 0x10 (new) flags 0x5', 'signal 15 to PID 1']);
  });

  it('records every file opened, for reading too', async () => {
    const [trace] = await traced(['cat /root/.ssh/id_ed25519 /etc/hostname']);
    expect(trace?.opened.map((o) => o.path)).toEqual(expect.arrayContaining(['/root/.ssh/id_ed25519', '/etc/hostname']));
  });

  it("gives each command of a batch its own processes, a background one included, and none of the driver's work", async () => {
    const [first, second] = await traced(['(touch /root/background; sleep 5) & sleep 0.5; touch /root/first', 'touch /root/second'], [true, false]);
    expect(changed(first)).toEqual(['openat /root/background', 'utimensat /root/background', 'openat /root/first', 'utimensat /root/first']);
    expect(changed(second)).toEqual(['openat /root/second', 'utimensat /root/second']);
    expect(second?.execs.map((e) => e.argv.join(' '))).toEqual(['touch /root/second']);
  });
});
