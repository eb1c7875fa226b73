// An outcome the log contradicts: success with every change denied, refused or failed is disputed, with each
// change named; reads do not count, a change that took effect or may yet settles it, and only success is disputed.
import { describe, expect, it } from 'vitest';
import { type Change, type ChangeStatus, deriveDispute, isChange } from '../../../src/domain/session/dispute.ts';

const change = (n: number, status: ChangeStatus, risk_class: Change['risk_class'] = 'config_mutation'): Change => ({
  execution_id: `e-${n}`,
  target: 'host:pve',
  command: `chown backup /srv/${n}`,
  risk_class,
  approval_id: status === 'denied' ? `ap-${n}` : null,
  status,
});

describe('deriveDispute', () => {
  it('disputes a success whose only change was denied, naming it', () => {
    expect(deriveDispute('success', [change(1, 'denied')])).toEqual({
      detail: 'closed as success, but its one change did not take effect: 1 denied',
      changes: [{ execution_id: 'e-1', target: 'host:pve', command: 'chown backup /srv/1', risk_class: 'config_mutation', status: 'denied' }],
    });
  });

  it('counts each way a change did not take effect', () => {
    const dispute = deriveDispute('success', [change(1, 'denied'), change(2, 'failed', 'destructive'), change(3, 'denied'), change(4, 'timed_out'), change(5, 'refused')]);
    expect(dispute?.detail).toBe('closed as success, but none of its 5 changes took effect: 2 denied, 1 failed, 1 timed out, 1 refused');
    expect(dispute?.changes.map((c) => c.status)).toEqual(['denied', 'failed', 'denied', 'timed_out', 'refused']);
  });

  it.each(['expired', 'cancelled'] as const)('counts a change whose approval %s as not taking effect', (status) => {
    expect(deriveDispute('success', [change(1, status)])?.detail).toBe(`closed as success, but its one change did not take effect: 1 ${status}`);
  });

  it('lets the outcome stand when a change succeeded, or may yet', () => {
    expect(deriveDispute('success', [change(1, 'denied'), change(2, 'succeeded')])).toBeNull();
    for (const pending of ['requested', 'awaiting_approval', 'approved', 'running'] as const) {
      expect(deriveDispute('success', [change(1, 'denied'), change(2, pending)])).toBeNull();
    }
  });

  it('disputes only success, and only a task that asked for a change', () => {
    expect(deriveDispute('partial', [change(1, 'denied')])).toBeNull();
    expect(deriveDispute('failed', [change(1, 'failed')])).toBeNull();
    expect(deriveDispute(null, [change(1, 'denied')])).toBeNull();
    expect(deriveDispute('success', [])).toBeNull();
  });

  it('counts config mutations and destructive commands as changes, not reads', () => {
    expect(isChange('reversible_low')).toBe(false);
    expect(isChange('config_mutation')).toBe(true);
    expect(isChange('destructive')).toBe(true);
  });
});
