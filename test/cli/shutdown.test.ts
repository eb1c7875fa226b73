// closeInOrder runs a service's close steps in order under one deadline: a step that never ends is named with
// those after it, a step that fails does not keep the rest from closing.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { closeInOrder } from '../../src/cli/shutdown.ts';

describe('closeInOrder', () => {
  it('runs every step in order and reports nothing open when they finish in time', async () => {
    const ran: string[] = [];
    const step = (name: string) => ({ name, close: () => Promise.resolve(void ran.push(name)) });
    expect(await closeInOrder([step('http'), step('runtime'), step('lock')], 1_000)).toEqual({ unfinished: [], failed: [] });
    expect(ran).toEqual(['http', 'runtime', 'lock']);
  });

  it('at the deadline, names the step still running and the ones it held up', async () => {
    const ran: string[] = [];
    const started = Date.now();
    const outcome = await closeInOrder(
      [
        { name: 'http', close: () => Promise.resolve(void ran.push('http')) },
        { name: 'runtime', close: () => new Promise<void>(() => undefined) },
        { name: 'lock', close: () => Promise.resolve(void ran.push('lock')) },
      ],
      200,
    );
    expect(outcome.unfinished).toEqual(['runtime', 'lock']);
    expect(ran).toEqual(['http']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('goes on past a step that fails, and reports it', async () => {
    const ran: string[] = [];
    const failure = new Error('projector store gone');
    const outcome = await closeInOrder(
      [
        { name: 'runtime', close: () => Promise.reject(failure) },
        { name: 'lock', close: () => Promise.resolve(void ran.push('lock')) },
      ],
      1_000,
    );
    expect(outcome).toEqual({ unfinished: [], failed: [{ name: 'runtime', error: failure }] });
    expect(ran).toEqual(['lock']);
  });
});

describe('NOMOS_SHUTDOWN_MS', () => {
  it('defaults, reads a number of milliseconds, and refuses nonsense by name', () => {
    expect(loadConfig({}).shutdownMs).toBe(5_000);
    expect(loadConfig({ NOMOS_SHUTDOWN_MS: '' }).shutdownMs).toBe(5_000);
    expect(loadConfig({ NOMOS_SHUTDOWN_MS: '1500' }).shutdownMs).toBe(1_500);
    expect(() => loadConfig({ NOMOS_SHUTDOWN_MS: 'soon' })).toThrow(/NOMOS_SHUTDOWN_MS/);
    expect(() => loadConfig({ NOMOS_SHUTDOWN_MS: '0' })).toThrow(/NOMOS_SHUTDOWN_MS/);
  });
});
