// The line that stands in for an elided tool result: which call, about what, how it ended, how large it was, and
// how to read it again.
import { describe, expect, it } from 'vitest';
import { elidedResultStub } from '../../src/agent/context-stub.ts';

const completed = (result: unknown, extra: { error?: string; result_original_bytes?: number } = {}) => ({
  tool_call_id: 'c1',
  result,
  error: extra.error ?? null,
  result_original_bytes: extra.result_original_bytes ?? null,
});
const reread = '; call get_tool_result with tool_call_id "c1" to read it again]';

describe('elidedResultStub', () => {
  it('names a run by its target, with its status and exit code', () => {
    const requested = { tool_call_id: 'c1', message_id: 'a', name: 'run', args: { target: 'lxc:rclone', command: 'df -h' } };
    const result = { execution_id: 'e1', target: 'lxc:rclone', status: 'failed', exit_code: 2, stdout: 'é' };
    expect(elidedResultStub(requested, completed(result))).toBe(`[elided: run lxc:rclone → failed, exit 2, ${Buffer.byteLength(JSON.stringify(result))} bytes${reread}`);
    // '{"execution_id":"e1","status":"pending"}'
    expect(elidedResultStub(requested, completed({ execution_id: 'e1', status: 'pending' }))).toBe(`[elided: run lxc:rclone → pending, 40 bytes${reread}`);
  });

  it('reads status and exit code from the start of a result that was cut when recorded, and gives its original size', () => {
    const requested = { tool_call_id: 'c1', message_id: 'a', name: 'run', args: { target: 'host:strong', command: 'journalctl' } };
    const cut = '{"execution_id":"e1","target":"host:strong","verdict":{"risk_class":"reversible_low"},"position":9,"status":"succeeded","exit_code":0,"stdout":"Jan 1 …';
    expect(elidedResultStub(requested, completed(cut, { result_original_bytes: 9_000 }))).toBe(`[elided: run host:strong → succeeded, exit 0, 9000 bytes${reread}`);
  });

  it('names another tool by its key argument, and an error as such', () => {
    const requested = { tool_call_id: 'c1', message_id: 'a', name: 'get_entity', args: { slug: 'vm:zimaos' } };
    // '{"slug":"vm:zimaos","attributes":{}}'
    expect(elidedResultStub(requested, completed({ slug: 'vm:zimaos', attributes: {} }))).toBe(`[elided: get_entity vm:zimaos → ok, 36 bytes${reread}`);
    expect(elidedResultStub(requested, completed(null, { error: 'not in the inventory' }))).toBe(`[elided: get_entity vm:zimaos → error, 20 bytes${reread}`);
    expect(elidedResultStub({ ...requested, name: 'whoami', args: {} }, completed({ a: 1 }))).toBe(`[elided: whoami → ok, 7 bytes${reread}`);
  });
});
