// The execution oracle (issue 32, point 2): every command of the corpus runs under the production shell (dash, as
// `sh -c`) in a throwaway sandbox, traced by strace, and what it did is held against what the classifier said: every
// program it executed was judged (unless it is always asked), and a reversible_low command changed nothing outside
// its scratch directory and read no secret. The classifier's misses on today's rules are a table of known misses,
// each asserted to be still a miss. docs/oracle.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classify, judgedPrograms } from '../../src/domain/risk/index.ts';
import type { Sandbox } from '../support/sandbox.ts';
import { openSandbox, sandboxProblem } from '../support/sandbox.ts';
import { proveSandbox } from './canaries.ts';
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
  let results: Map<string, Ran>;

  beforeAll(async () => {
    sandbox = await openSandbox();
    await proveSandbox(sandbox);
    results = await runAll(sandbox, cases.map((c) => c.command), {
      concurrency: 3,
      batchSize: 30,
      limitSeconds: 2,
      // Only a schedule (test/oracle/run.ts): attacks and commands judged to change something reset the state after them.
      mayChange: (command) => classify(command).risk_class !== 'reversible_low' || !/^(rule|variant) /.test(cases.find((c) => c.command === command)?.group ?? ''),
    });
  }, 600_000);

  afterAll(async () => {
    await sandbox?.close();
  });

  it('lists only corpus cases as known misses', () => {
    const stale = KNOWN_MISSES.filter((m) => !groups.includes(m.group) || (m.only ?? []).some((c) => !cases.some((k) => k.group === m.group && k.command === c)));
    expect(stale).toEqual([]);
  });

  describe.each(groups)('%s', (group) => {
    const members = cases.filter((c) => c.group === group);
    const titled = members.map((c) => {
      const miss = knownMiss(group, c.command);
      return [`${JSON.stringify(c.command)}${miss === undefined ? '' : ` is still a known miss: ${miss.why}`}`, c.command] as const;
    });
    it.each(titled)('%s', (_title, command) => {
      const ran = results.get(command);
      expect(ran, 'the command never ran to its end in a sandbox').toBeDefined();
      const verdict = classify(command);
      const findings = findingsOf(verdict, judgedPrograms(command), ran!.trace);
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
