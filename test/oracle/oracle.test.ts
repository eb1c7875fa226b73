// The execution oracle (issue 32, point 2): every command of the corpus runs under the production shell (dash, as
// `sh -c`) in a throwaway sandbox, traced by strace, and what it did is held against what the classifier said: every
// program it executed was judged (unless it is always asked), and a reversible_low command changed nothing outside
// its scratch directory and read no secret. The classifier's misses on today's rules are a table of known misses,
// each asserted to be still a miss. First, the canaries prove the sandbox holds; the corpus runs only if they all
// passed. docs/oracle.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Verdict } from '../../src/domain/risk/index.ts';
import { classify, judgedPrograms } from '../../src/domain/risk/index.ts';
import type { Sandbox } from '../support/sandbox.ts';
import { openSandbox, sandboxProblem } from '../support/sandbox.ts';
import { CANARIES } from './canaries.ts';
import { corpus } from './corpus.ts';
import { findingsOf } from './findings.ts';
import { KNOWN_MISSES, knownMiss } from './known-misses.ts';
import type { Ran } from './run.ts';
import { runAll } from './run.ts';

const problem = sandboxProblem();
const cases = corpus();
const groups = [...new Set(cases.map((c) => c.group))];

describe.skipIf(problem !== undefined)(`the execution oracle${problem === undefined ? '' : ` (skipped: ${problem})`}`, () => {
  let sandbox: Sandbox;
  const proven = new Set<string>();
  beforeAll(async () => {
    sandbox = await openSandbox();
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  describe('its sandbox holds: commands that would change the machine change nothing seen from outside', () => {
    it.each(CANARIES.map((c) => [c.name, c] as const))('%s', async (name, canary) => {
      expect(await canary.check(sandbox)).toEqual([]);
      proven.add(name);
    }, 60_000);
  });

  describe('on the corpus', () => {
    let results: Map<string, Ran>;
    const judged = new Map<string, { verdict: Verdict; programs: string[] }>();

    beforeAll(async () => {
      const unproven = CANARIES.filter((c) => !proven.has(c.name)).map((c) => c.name);
      if (unproven.length > 0) throw new Error(`the sandbox is not proven (${unproven.join('; ')}): the corpus does not run`);
      for (const { command } of cases) judged.set(command, { verdict: classify(command), programs: judgedPrograms(command) });
      const groupOf = new Map(cases.map((c) => [c.command, c.group]));
      results = await runAll(sandbox, cases.map((c) => c.command), {
        concurrency: 3,
        batchSize: 30,
        limitSeconds: 2,
        // Only a schedule (test/oracle/run.ts): attacks and commands judged to change something reset the state after them.
        mayChange: (command) => judged.get(command)?.verdict.risk_class !== 'reversible_low' || !/^(rule|variant) /.test(groupOf.get(command) ?? ''),
      });
    }, 600_000);

    it('lists only corpus cases as known misses', () => {
      const stale = KNOWN_MISSES.filter((m) => !groups.includes(m.group) || (m.only ?? []).some((c) => !cases.some((k) => k.group === m.group && k.command === c)));
      expect(stale).toEqual([]);
    });

    describe.each(groups)('%s', (group) => {
      const titled = cases.filter((c) => c.group === group).map((c) => {
        const miss = knownMiss(group, c.command);
        return [`${JSON.stringify(c.command)}${miss === undefined ? '' : ` is still a known miss: ${miss.why}`}`, c.command] as const;
      });
      it.each(titled)('%s', (_title, command) => {
        const ran = results.get(command);
        expect(ran, 'the command never ran to its end in a sandbox').toBeDefined();
        const { verdict, programs } = judged.get(command)!;
        const findings = findingsOf(verdict, programs, ran!.trace);
        const miss = knownMiss(group, command);
        const report = findings.map((f) => `${f.kind}: ${f.evidence}`);
        if (miss === undefined) {
          expect(report, `verdict ${verdict.risk_class} (${verdict.rule}); exit ${String(ran!.outcome.status)}; output: ${ran!.outcome.output.slice(0, 400)}`).toEqual([]);
          return;
        }
        // A known miss must still be one: when the classifier is fixed, this fails until the table entry goes.
        const kinds = new Set(findings.map((f) => f.kind));
        expect(miss.kinds.filter((k) => !kinds.has(k)), `known miss (${miss.why}) no longer shows; findings now: ${JSON.stringify(report)}`).toEqual([]);
      });
    });
  });
});
