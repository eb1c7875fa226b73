// The sandbox the execution oracle runs its corpus in holds: each canary runs a command that would change the test
// machine (its files, processes, network, name, mounts) and checks from outside that nothing changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../support/sandbox.ts';
import { openSandbox, sandboxProblem } from '../support/sandbox.ts';
import { CANARIES } from './canaries.ts';

const problem = sandboxProblem();

describe.skipIf(problem !== undefined)(`the oracle's sandbox${problem === undefined ? '' : ` (skipped: ${problem})`}`, () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await openSandbox();
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it.each(CANARIES.map((c) => [c.name, c] as const))('%s', async (_name, canary) => {
    expect(await canary.check(sandbox)).toEqual([]);
  }, 60_000);
});
