// How `nomos chat` draws tool results and executions, from the answers' data: every way a run can stand has
// its own mark (✓ only for success), inspect_path says which targets did not succeed, a result the server cut
// to 4 KiB is still drawn by the status it names, and output is shown as its last lines.
import { describe, expect, it } from 'vitest';
import { drawOutcome, drawToolResult, outputTail } from '../../src/cli/chat-draw.ts';
import { historyLines } from '../../src/cli/chat-history.ts';

const base = { execution_id: 'e1', target: 'host:a', verdict: { risk_class: 'destructive', reason: 'r', rule: 'x', inner_commands: [] }, position: 7 };

describe('a run’s reply, drawn', () => {
  it.each([
    [{ status: 'succeeded', exit_code: 0, stdout: 'ok\n', stderr: '' }, ['✓ succeeded · exit 0', '  out│ ok']],
    [{ status: 'failed', exit_code: 2, stdout: '', stderr: 'boom\n' }, ['✗ failed · exit 2', '  err│ boom']],
    [{ status: 'timed_out', exit_code: null, stdout: 'half\n', stderr: '' }, ['✗ timed out (ended at the hard limit)', '  out│ half']],
    [{ status: 'refused', reason: 'unreachable', detail: 'no SSH key is configured' }, ['✗ refused (unreachable): no SSH key is configured']],
    [{ status: 'refused', reason: 'retry_cap', detail: 'third attempt' }, ['✗ refused (retry_cap): third attempt']],
    [{ status: 'pending', hint: 'Still running.' }, ['… pending: still running (execution e1)']],
    [{ status: 'approval_required', approval_id: 'a1' }, ["⏸ waiting for an operator's approval (destructive)"]],
  ])('%o', (reply, lines) => {
    expect(drawToolResult('run', { ...base, ...reply }, null)).toEqual(lines);
  });

  it('a result cut to 4 KiB (a string) is drawn by the status it names, never ✓', () => {
    const cut = JSON.stringify({ ...base, status: 'failed', exit_code: 1, stdout: 'x'.repeat(5_000) }).slice(0, 4_096);
    expect(drawToolResult('run', cut, null)).toEqual(['✗ failed · no exit code (result cut short)']);
  });

  it('a tool error is ✗ with the error, whatever the tool', () => {
    expect(drawToolResult('run', null, 'target host:x is not in the inventory')).toEqual(['✗ target host:x is not in the inventory']);
    expect(drawToolResult('get_entity', { error: 'host:x is not in the inventory' }, null)).toEqual(['✗ host:x is not in the inventory']);
  });

  it('any other tool’s result is ✓ with a short rendering of it', () => {
    expect(drawToolResult('set_goal', { position: 3 }, null)).toEqual(['✓ {"position":3}']);
  });
});

describe('an execution’s row (GET /executions/:id, get_execution_status), drawn', () => {
  it.each([
    [{ status: 'succeeded', exit_code: 0, stdout_tail: 'done\n', stderr_tail: '' }, ['✓ succeeded · exit 0', '  out│ done']],
    [{ status: 'failed', exit_code: null, error: 'lost: the server running it stopped', stdout_tail: '', stderr_tail: '' }, ['✗ failed · no exit code: lost: the server running it stopped']],
    [{ status: 'failed', exit_code: null, signal: 'KILL', stdout_tail: '', stderr_tail: '' }, ['✗ failed · signal KILL']],
    [{ status: 'refused', refusal: 'host_key_mismatch', error: 'the host presented another key' }, ['✗ refused (host_key_mismatch): the host presented another key']],
    [{ status: 'running', stdout_so_far: 'step 1\n' }, ['… running: still running (execution e1)', '  out│ step 1']],
    [{ status: 'hung', advice: 'state D: inspect it' }, ['⚠ hung: no output and the process is in uninterruptible sleep: state D: inspect it']],
    [{ status: 'denied' }, ['✗ denied']],
    [{ status: 'expired' }, ['✗ the approval expired; nothing ran']],
  ])('%o', (row, lines) => {
    expect(drawToolResult('get_execution_status', { execution_id: 'e1', ...row }, null)).toEqual(lines);
  });

  it('a refusal without a reason still reads as a refusal', () => {
    expect(drawOutcome({ status: 'refused' })).toEqual(['✗ refused (no reason given)']);
  });
});

describe('inspect_path, drawn', () => {
  const row = (target: string, status: string, errors = '', exit_code: number | null = 0) => ({ target, execution_id: null, status, exit_code, output: '', errors });

  it('is ✓ when every target answered', () => {
    expect(drawToolResult('inspect_path', { path: '/srv', rows: [row('host:a', 'succeeded'), row('host:b', 'succeeded')] }, null)).toEqual(['✓ /srv on 2 targets']);
  });

  it('is ✗ naming each target that did not, and why', () => {
    const table = { path: '/srv', rows: [row('host:a', 'succeeded'), row('host:b', 'refused', 'cannot reach host:b', null), row('host:c', 'failed', 'stat: cannot stat', 1)] };
    expect(drawToolResult('inspect_path', table, null)).toEqual([
      '✗ /srv on 3 targets: 2 did not succeed',
      '    host:b: refused · cannot reach host:b',
      '    host:c: failed · exit 1 · stat: cannot stat',
    ]);
  });
});

describe('output tails', () => {
  it('keeps the last lines and says how many came before', () => {
    const text = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    expect(outputTail(text, 'out', 3)).toEqual(['  out│ … 9 earlier lines', '  out│ line 10', '  out│ line 11', '  out│ line 12']);
    expect(outputTail('   \n', 'err')).toEqual([]);
  });
});

describe('a session’s history', () => {
  const message = (role: string, text: string | null, tool_calls: any[] = []) => ({ role, content: { text, tool_calls } });

  it('is the last entries — texts and a line per tool call — under the session’s headline', () => {
    const view = {
      session: { title: 'Restart nginx', status: 'active', outcome: null },
      messages: [
        message('user', 'restart nginx on web'),
        message('assistant', 'It is waiting for you.', [
          { name: 'run', args: { target: 'host:web', command: 'systemctl restart nginx' }, result: { ...base, status: 'approval_required' }, error: null, status: 'completed' },
          { name: 'run', args: { target: 'host:web', command: 'uptime' }, result: null, error: null, status: 'requested' },
        ]),
      ],
      as_of_position: 9,
    };
    expect(historyLines('s1', view, 3)).toEqual([
      'session s1 · Restart nginx · active',
      '  … 1 earlier (GET /sessions/s1 has them all)',
      `  → run {"target":"host:web","command":"systemctl restart nginx"}  ⏸ waiting for an operator's approval (destructive)`,
      '  → run {"target":"host:web","command":"uptime"}  … no result yet',
      'nomos> It is waiting for you.',
    ]);
  });

  it('says so when there is nothing yet', () => {
    expect(historyLines('s2', { session: { status: 'active' }, messages: [], as_of_position: 1 })).toEqual(['session s2 · active', '  (no messages yet)']);
  });
});
