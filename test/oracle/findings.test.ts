// The oracle's judgement on real traces: it catches a verdict that lets a write or an unjudged program through, keeps
// quiet on what a verdict covers, and exempts only what is always asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RiskClass, Verdict } from '../../src/domain/risk/index.ts';
import type { Sandbox } from '../support/sandbox.ts';
import { openSandbox, sandboxProblem } from '../support/sandbox.ts';
import type { FindingKind } from './findings.ts';
import { findingsOf } from './findings.ts';
import type { CommandTrace } from './trace.ts';
import { commandTraces } from './trace.ts';

const problem = sandboxProblem();
const verdict = (risk: RiskClass, rule = 'a-rule'): Verdict => ({ risk_class: risk, rule, reason: 'for the test', inner_commands: [] });

describe.skipIf(problem !== undefined)(`the oracle's findings${problem === undefined ? '' : ` (skipped: ${problem})`}`, () => {
  let sandbox: Sandbox;
  const traces = new Map<string, CommandTrace>();
  const COMMANDS = ['touch /root/x', 'touch here', 'ls', 'cat /etc/shadow', 'ip link set lo down', 'dpkg -l', './evil/ls'];
  beforeAll(async () => {
    sandbox = await openSandbox();
    const batch = await sandbox.runBatch(COMMANDS, { limitSeconds: 5 });
    for (const trace of commandTraces(batch.trace, COMMANDS)) traces.set(trace.command, trace);
  }, 60_000);
  afterAll(async () => {
    await sandbox?.close();
  });
  const kinds = (command: string, risk: RiskClass, judged: readonly string[]): FindingKind[] =>
    [...new Set(findingsOf(verdict(risk), judged, traces.get(command)!).map((f) => f.kind))].sort();

  it('catches a read-only verdict on a command that writes outside scratch, and not on one that writes inside', () => {
    expect(kinds('touch /root/x', 'reversible_low', ['touch'])).toEqual(['write-outside-scratch']);
    expect(kinds('touch here', 'reversible_low', ['touch'])).toEqual([]);
    expect(kinds('touch /root/x', 'config_mutation', ['touch'])).toEqual([]);
  });

  it('catches a program the classifier did not judge, unless the command is always asked', () => {
    expect(kinds('ls', 'reversible_low', ['ls'])).toEqual([]);
    expect(kinds('ls', 'reversible_low', ['cat'])).toEqual(['unjudged-program']);
    expect(kinds('ls', 'config_mutation', [])).toEqual(['unjudged-program']);
    expect(kinds('ls', 'destructive', [])).toEqual([]);
  });

  it('catches secrets read, and system changes, under a read-only verdict', () => {
    expect(kinds('cat /etc/shadow', 'reversible_low', ['cat'])).toEqual(['secret-read']);
    expect(kinds('ip link set lo down', 'reversible_low', ['ip'])).toEqual(['system-change']);
  });

  it('lets a judged tool run its allow-listed helper, and no other tool', () => {
    expect(kinds('dpkg -l', 'reversible_low', ['dpkg'])).toEqual([]);
    expect(kinds('dpkg -l', 'reversible_low', ['apt'])).toEqual(['unjudged-program']);
  });

  it('catches a program that has a judged name but lives outside the system directories', () => {
    expect(kinds('./evil/ls', 'reversible_low', ['ls', 'touch'])).toEqual(['foreign-program', 'write-outside-scratch']);
  });
});

// Without a sandbox: a tool's own state (TOOL_STATE) is exempt only under that tool, and only at that path.
describe("the oracle's allow-list of tools' own state", () => {
  const EIPP = '/var/log/apt/eipp.log.xz';
  const trace = (program: string, path: string): CommandTrace => ({
    command: `${program} …`,
    started: true,
    execs: [{ pid: 2, path: `/usr/bin/${program}`, argv: [program] }],
    fileChanges: [{ pid: 2, syscall: 'openat', path, actual: undefined, errno: 'EROFS' }],
    systemChanges: [],
    opened: [],
  });
  const kinds = (program: string, path: string) => findingsOf(verdict('reversible_low'), [program], trace(program, path)).map((f) => f.kind);

  it("lets apt-get's simulation replace its solver log, and nothing else write there or elsewhere", () => {
    expect(kinds('apt-get', EIPP)).toEqual([]);
    expect(kinds('touch', EIPP)).toEqual(['write-outside-scratch']);
    expect(kinds('apt-get', '/var/log/apt/history.log')).toEqual(['write-outside-scratch']);
  });
});
