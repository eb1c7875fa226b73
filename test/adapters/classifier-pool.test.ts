// The classifier's worker threads, real ones: the same verdicts as classify() in process, a command over the time
// bound refused as destructive (and the pool answering after it), a thread that crashes or cannot start failing
// closed (destructive, never an error), the event loop free while large commands are classified, and a clean close.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ClassifierPool } from '../../src/adapters/classifier-pool.ts';
import { judge, loadPolicy } from '../../src/domain/policy/index.ts';
import { classify, MAX_COMMAND_BYTES, RULES } from '../../src/domain/risk/index.ts';

/** `unit` repeated, joined by `sep`, to fill the largest command accepted. */
const fill = (unit: string, sep: string, head = '', tail = ''): string => {
  const room = MAX_COMMAND_BYTES - head.length - tail.length;
  return head + Array.from({ length: Math.floor((room + sep.length) / (unit.length + sep.length)) }, () => unit).join(sep) + tail;
};

/** The slowest shape bench/classify.ts knows: a pipeline of 2 730 stages. */
const WORST = fill('ls', ' | ');
/** The slowest to classify on a fresh thread: brackets nested to the limit, then a long list. */
const SLOWEST = fill('id', ';', `${'('.repeat(64)}id${')'.repeat(64)};`);
const LARGE = [WORST, SLOWEST, fill('id', ' ; '), fill('a', ' ', 'grep -e x'), fill('ls', ' | ', "sh -c '", "'"), `cat <<'EOF'\n${'x'.repeat(MAX_COMMAND_BYTES - 20)}\nEOF`];

describe('the classifier pool', () => {
  // Every command through a thread, however short, so that the threads' verdicts are the ones compared.
  const pool = new ClassifierPool({ timeoutMs: 30_000, inlineBelowBytes: 0 });
  afterAll(() => pool.close());

  it('gives the verdict classify() gives, for every rule example and the largest shapes', async () => {
    const corpus = [...RULES.flatMap((rule) => rule.examples), ...LARGE];
    const verdicts = await Promise.all(corpus.map((command) => pool.classify(command)));
    expect(verdicts).toEqual(corpus.map((command) => classify(command)));
    expect(pool.threadCount).toBeGreaterThanOrEqual(1);
    expect(pool.threadCount).toBeLessThanOrEqual(pool.size);
  }, 120_000);

  it('keeps the event loop free while four of the largest commands are classified', async () => {
    await pool.classify('ls'); // a thread ready: its start is not what is measured
    // In process, the four hold the event loop for as long as they take together.
    const t0 = performance.now();
    const inline = [1, 2, 3, 4].map(() => classify(WORST));
    const inlineMs = performance.now() - t0;
    // Off the loop, timers fire while the four are classified; in process, none could until all four were done.
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const verdicts = await Promise.all([1, 2, 3, 4].map(() => pool.classify(WORST)));
    clearInterval(timer);
    expect(verdicts).toEqual(inline);
    expect(inlineMs).toBeGreaterThan(0);
    expect(ticks).toBeGreaterThan(1);
  }, 60_000);

  it("decides each policy on the thread as judge() does in process: the policy in force, a candidate, and the parts", async () => {
    const loaded = loadPolicy({
      rules: [
        { id: 'no-ls', match: ['ls', '/root'], decision: 'deny', justification: 'private' },
        { id: 'id-ok', match: ['id'], targets: ['lxc:*'], decision: 'allow', justification: 'harmless' },
      ],
    });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const long = `${'id; '.repeat(60)}sudo sh -c 'ls /root'`;
    for (const request of [
      { command: long, target: 'lxc:box', policies: [null, loaded.policy], parts: true },
      { command: fill('id', ' ; '), target: 'lxc:box', policies: [loaded.policy] },
      { command: WORST, target: 'host:strong', policies: [loaded.policy, null] },
    ]) {
      expect(await pool.judge(request)).toEqual(judge(request));
    }
    expect((await pool.judge({ command: long, target: 'lxc:box', policies: [loaded.policy] })).decisions[0]).toMatchObject({ decision: 'deny', rule_id: 'no-ls' });
  }, 60_000);
});

describe('the time bound', () => {
  it('refuses a command it cannot classify in time as destructive, ends that thread, and answers after', async () => {
    // Far below what the slowest shape takes, far above what a short command takes on a fresh thread.
    const pool = new ClassifierPool({ timeoutMs: 300, size: 1, inlineBelowBytes: 0 });
    try {
      await pool.classify('ls'); // started and ready, so the bound counts the classification alone
      const verdict = await pool.classify(SLOWEST);
      expect(verdict).toMatchObject({ risk_class: 'destructive', rule: 'too-slow', inner_commands: [] });
      // Decided under a policy, a command not judged in time matches no rule (even one allowing its words) and asks.
      const allowAll = { rules: [{ id: 'id-ok', match: ['id'], targets: ['*'], decision: 'allow' as const, justification: 'harmless' }] };
      const judged = await pool.judge({ command: SLOWEST, target: 'host:strong', policies: [allowAll] });
      expect(judged.verdict.rule).toBe('too-slow');
      expect(judged.decisions).toEqual([expect.objectContaining({ decision: 'ask', rule_id: 'classifier' })]);
      expect(verdict.reason).toBe(`${SLOWEST.slice(0, 200)}…: too slow to classify (over 300 ms): what it runs is not known`);
      expect(await pool.classify('rm -rf /srv/x')).toEqual(classify('rm -rf /srv/x'));
      expect(pool.threadCount).toBe(1);
    } finally {
      await pool.close();
    }
  }, 60_000);
});

describe('a thread that fails', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nomos-pool-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const judgedFailed = { risk_class: 'destructive', rule: 'classifier-failed', inner_commands: [] };

  it('judges the command it crashed on destructive, and a later one too when every thread crashes', async () => {
    // Says it is ready, then dies on the first command it is given.
    const crashing = join(dir, 'crashing.mjs');
    writeFileSync(crashing, "import { parentPort } from 'node:worker_threads';\nparentPort.postMessage({ ready: true });\nparentPort.on('message', () => { throw new Error('boom'); });\n");
    const pool = new ClassifierPool({ timeoutMs: 30_000, size: 1, inlineBelowBytes: 0, threadFile: crashing });
    try {
      const verdict = await pool.classify('ls /srv');
      expect(verdict).toMatchObject(judgedFailed);
      expect(verdict.reason).toContain('boom');
      expect(await pool.classify('cat /etc/hostname')).toMatchObject(judgedFailed);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('judges every waiting command destructive when its thread cannot start', async () => {
    const pool = new ClassifierPool({ timeoutMs: 30_000, size: 1, inlineBelowBytes: 0, threadFile: join(dir, 'missing.mjs') });
    try {
      const verdicts = await Promise.all([pool.classify('uptime'), pool.classify('df -h')]);
      for (const verdict of verdicts) expect(verdict).toMatchObject(judgedFailed);
    } finally {
      await pool.close();
    }
  }, 60_000);
});

describe('closing', () => {
  it('ends every thread and refuses what is asked after, save short commands classified inline', async () => {
    const pool = new ClassifierPool({ timeoutMs: 30_000, size: 2 });
    const answers = await Promise.all([pool.classify(WORST), pool.classify(SLOWEST)]);
    expect(answers.map((v) => v.rule)).toEqual([classify(WORST).rule, classify(SLOWEST).rule]);
    expect(pool.threadCount).toBe(2);
    await pool.close();
    expect(pool.threadCount).toBe(0);
    await expect(pool.classify(WORST)).rejects.toThrow('the classifier pool is closed');
    expect(await pool.classify('ls /tmp')).toEqual(classify('ls /tmp'));
  }, 60_000);

  it('refuses what waits when it closes', async () => {
    const pool = new ClassifierPool({ timeoutMs: 30_000, size: 1 });
    const refused = [pool.classify(WORST), pool.classify(WORST)].map((answer) => expect(answer).rejects.toThrow('the classifier pool is closed'));
    await pool.close();
    await Promise.all(refused);
    expect(pool.threadCount).toBe(0);
  }, 60_000);
});
