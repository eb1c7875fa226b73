// A real pending approval for a test to act on: a config mutation on a registered container (its host reached
// through a fleet stand-in, test/support/instant-executor.ts) waits for an operator. Auth off: the test's server
// must take the default actor's writes.
import { expect } from 'vitest';
import type { TestServer } from './server.ts';

export interface Pending {
  readonly session: string;
  readonly approval_id: string;
  readonly execution_id: string;
}

export const PENDING_COMMAND = 'chown :0 /srv/data';

export async function pendingApproval(server: TestServer, goal?: string): Promise<Pending> {
  const reg = await server.request('POST', '/entities', {
    entities: [
      { slug: 'host:peer', type: 'host', ssh: { host: '127.0.0.1', port: 22, user: 'root' } },
      { slug: 'lxc:box', type: 'lxc', parent: 'host:peer', pve_id: 132 },
    ],
  });
  expect(reg.status, JSON.stringify(reg.body)).toBe(200);
  const session = (await server.request('POST', '/sessions')).body.session_id as string;
  if (goal !== undefined) expect((await server.request('POST', `/sessions/${session}/commands`, { type: 'set_goal', goal })).status).toBe(200);
  const queued = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target: 'lxc:box', command: PENDING_COMMAND });
  expect(queued.body, JSON.stringify(queued.body)).toMatchObject({ status: 'approval_required', verdict: { risk_class: 'config_mutation' } });
  return { session, approval_id: queued.body.approval_id as string, execution_id: queued.body.execution_id as string };
}
