// The entity decider: given events → when command → then events (or the rule it breaks), plus the payload
// rules (parents, order) and the inventory schema a payload must pass before anything is decided.
import { describe, expect, it } from 'vitest';
import {
  AttributesUpdate,
  type EntityCommand,
  type EntitySpec,
  EntitySpec as EntitySpecSchema,
  InventoryPayload,
  RelationshipSpec,
} from '../../src/domain/entity/commands.ts';
import { checkParents, decide, registrationOrder } from '../../src/domain/entity/decide.ts';
import { type EntityEvent, hostKeyProblem } from '../../src/domain/entity/events.ts';
import { type EntityState, evolve, initialEntityState } from '../../src/domain/entity/state.ts';
import { NotFound, RuleViolation } from '../../src/domain/messages.ts';

/** An OpenSSH public key of `type` whose blob opens with its type name, as a real key's does. */
function sshKey(type: string, fill: number): string {
  const name = Buffer.from(type);
  const body = Buffer.alloc(32, fill);
  const blob = Buffer.concat([u32(name.length), name, u32(body.length), body]);
  return `${type} ${blob.toString('base64')}`;
}
function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}
const KEY_A = sshKey('ssh-ed25519', 1);
const KEY_B = sshKey('ssh-ed25519', 2);

const fold = (...events: EntityEvent[]): EntityState => events.reduce(evolve, initialEntityState);

function given(...events: EntityEvent[]) {
  const state = fold(...events);
  return {
    when: (command: EntityCommand): EntityEvent[] => decide(command, state),
    refuses: (command: EntityCommand): Error => {
      try {
        const decided = decide(command, state);
        throw new Error(`expected a refusal, got ${JSON.stringify(decided)}`);
      } catch (error) {
        if (error instanceof RuleViolation || error instanceof NotFound) return error;
        throw error;
      }
    },
  };
}

const spec = (input: unknown): EntitySpec => EntitySpecSchema.parse(input);
const register = (input: unknown): EntityCommand => ({ type: 'register_entity', entity: spec(input) });

const strongSpec = { slug: 'host:strong', type: 'host', ssh: { host: '192.168.8.10' } };
const rcloneSpec = { slug: 'lxc:rclone', type: 'lxc', parent: 'host:strong', pve_id: 132 };

const strongRegistered: EntityEvent = {
  type: 'EntityRegistered',
  data: {
    slug: 'host:strong',
    type: 'host',
    name: 'strong',
    state: 'active',
    parent: null,
    pve_id: null,
    ssh: { host: '192.168.8.10', port: 22, user: 'root' },
    attributes: {},
  },
};
const rcloneRegistered: EntityEvent = {
  type: 'EntityRegistered',
  data: { slug: 'lxc:rclone', type: 'lxc', name: 'rclone', state: 'active', parent: 'host:strong', pve_id: 132, ssh: null, attributes: { role: 'backup' } },
};
const pinned = (host_key: string, pinned_by: 'operator' | 'first_connection' = 'first_connection'): EntityEvent => ({
  type: 'HostKeyPinned',
  data: { host_key, pinned_by, previous_host_key: null },
});
const stateChanged = (from: 'provisioning' | 'active' | 'destroyed', to: 'provisioning' | 'active' | 'destroyed'): EntityEvent => ({
  type: 'EntityStateChanged',
  data: { from, to, reason: 'test' },
});

describe('register_entity', () => {
  it('registers a new host with ssh defaults (port 22, user root, active)', () => {
    expect(given().when(register(strongSpec))).toEqual([strongRegistered]);
  });

  it('pins an operator-declared host key with the registration', () => {
    const events = given().when(register({ ...strongSpec, ssh: { host: '192.168.8.10', host_key: KEY_A } }));
    expect(events).toEqual([strongRegistered, { type: 'HostKeyPinned', data: { host_key: KEY_A, pinned_by: 'operator', previous_host_key: null } }]);
  });

  it('registers a container in the provisioning state, as pct create does', () => {
    const [event] = given().when(register({ slug: 'lxc:new', type: 'lxc', parent: 'host:strong', pve_id: 140, state: 'provisioning' }));
    expect(event).toEqual({
      type: 'EntityRegistered',
      data: { slug: 'lxc:new', type: 'lxc', name: 'new', state: 'provisioning', parent: 'host:strong', pve_id: 140, ssh: null, attributes: {} },
    });
  });

  it('decides nothing for an identical entity, whatever the key order of its attributes', () => {
    expect(given(strongRegistered).when(register(strongSpec))).toEqual([]);
    const attrs = { ...rcloneSpec, attributes: { role: 'backup' } };
    expect(given(rcloneRegistered).when(register(attrs))).toEqual([]);
    expect(given(strongRegistered, pinned(KEY_A)).when(register({ ...strongSpec, ssh: { host: '192.168.8.10', host_key: KEY_A } }))).toEqual([]);
  });

  it('decides only what changed', () => {
    expect(given(strongRegistered).when(register({ ...strongSpec, ssh: { host: '192.168.8.10', port: 2222 } }))).toEqual([
      { type: 'EntityUpdated', data: { ssh: { port: 2222 } } },
    ]);
    expect(given(rcloneRegistered).when(register({ ...rcloneSpec, pve_id: 133, attributes: { role: 'backup', tier: 2 } }))).toEqual([
      { type: 'EntityUpdated', data: { pve_id: 133, attributes: { role: 'backup', tier: 2 } } },
    ]);
    expect(given(rcloneRegistered).when(register({ ...rcloneSpec, parent: 'host:other' }))).toEqual([{ type: 'EntityUpdated', data: { parent: 'host:other' } }]);
  });

  it('leaves attributes, state and a pinned key alone when a re-registration omits them', () => {
    const destroyed = given(rcloneRegistered, stateChanged('active', 'destroyed'));
    expect(destroyed.when(register(rcloneSpec))).toEqual([]);
    expect(given(strongRegistered, pinned(KEY_A)).when(register(strongSpec))).toEqual([]);
  });

  it('changes state when a re-registration declares another one', () => {
    expect(given(rcloneRegistered, stateChanged('active', 'destroyed')).when(register({ ...rcloneSpec, state: 'provisioning' }))).toEqual([
      { type: 'EntityStateChanged', data: { from: 'destroyed', to: 'provisioning', reason: 'registered' } },
    ]);
  });

  it('lets an operator replace a pinned key, recording the one it replaced', () => {
    expect(given(strongRegistered, pinned(KEY_A)).when(register({ ...strongSpec, ssh: { host: '192.168.8.10', host_key: KEY_B } }))).toEqual([
      { type: 'HostKeyPinned', data: { host_key: KEY_B, pinned_by: 'operator', previous_host_key: KEY_A } },
    ]);
  });
});

describe('pin_host_key', () => {
  const pin = (host_key: string, slug = 'host:strong'): EntityCommand => ({ type: 'pin_host_key', slug, host_key });

  it('pins the key seen at the first connection', () => {
    expect(given(strongRegistered).when(pin(KEY_A))).toEqual([pinned(KEY_A, 'first_connection')]);
  });

  it('decides nothing for the key already pinned', () => {
    expect(given(strongRegistered, pinned(KEY_A, 'operator')).when(pin(KEY_A))).toEqual([]);
  });

  it('refuses another key than the pinned one', () => {
    const refusal = given(strongRegistered, pinned(KEY_A)).refuses(pin(KEY_B));
    expect(refusal).toBeInstanceOf(RuleViolation);
    expect((refusal as RuleViolation).rule).toBe('host_key_mismatch');
    expect(refusal.message).toMatch(/host:strong.*first connection/);
  });

  it('refuses an unknown entity, a guest, and a destroyed host', () => {
    const unknown = given().refuses(pin(KEY_A, 'host:nope'));
    expect(unknown).toBeInstanceOf(NotFound);
    expect((unknown as NotFound).code).toBe('unknown_entity');
    expect((given(rcloneRegistered).refuses(pin(KEY_A, 'lxc:rclone')) as RuleViolation).rule).toBe('not_a_host');
    expect((given(strongRegistered, stateChanged('active', 'destroyed')).refuses(pin(KEY_A)) as RuleViolation).rule).toBe('entity_destroyed');
  });
});

describe('set_entity_state', () => {
  const set = (state: 'provisioning' | 'active' | 'destroyed', reason = 'pct destroy 132 succeeded'): EntityCommand => ({
    type: 'set_entity_state',
    slug: 'lxc:rclone',
    state,
    reason,
  });

  it('records the change with its reason', () => {
    expect(given(rcloneRegistered).when(set('destroyed'))).toEqual([
      { type: 'EntityStateChanged', data: { from: 'active', to: 'destroyed', reason: 'pct destroy 132 succeeded' } },
    ]);
  });

  it('decides nothing for the state it is already in', () => {
    expect(given(rcloneRegistered).when(set('active'))).toEqual([]);
  });

  it('does not revive a destroyed entity, and knows no unknown one', () => {
    expect((given(rcloneRegistered, stateChanged('active', 'destroyed')).refuses(set('active')) as RuleViolation).rule).toBe('entity_destroyed');
    expect((given().refuses(set('active')) as NotFound).code).toBe('unknown_entity');
  });
});

describe('evolve', () => {
  it('folds a stream into the entity as it stands', () => {
    const state = fold(
      strongRegistered,
      { type: 'EntityUpdated', data: { ssh: { user: 'admin' }, attributes: { rack: 'a' } } },
      pinned(KEY_A),
      stateChanged('active', 'provisioning'),
    );
    expect(state).toEqual({
      slug: 'host:strong',
      type: 'host',
      name: 'strong',
      state: 'provisioning',
      parent: null,
      pveId: null,
      ssh: { host: '192.168.8.10', port: 22, user: 'admin' },
      hostKey: KEY_A,
      hostKeyPinnedBy: 'first_connection',
      attributes: { rack: 'a' },
      relationships: [],
      retired: false,
    });
  });

  it('merges attributes updates and adds relationships', () => {
    const state = fold(
      rcloneRegistered,
      { type: 'EntityAttributesUpdated', data: { attributes: { os: 'debian 12', tier: 2 } } },
      { type: 'EntityAttributesUpdated', data: { attributes: { role: null, tier: 3 } } },
      { type: 'RelationshipCreated', data: { to: 'host:strong', type: 'backs_up' } },
    );
    expect(state?.attributes).toEqual({ os: 'debian 12', tier: 3 });
    expect(state?.relationships).toEqual([{ to: 'host:strong', type: 'backs_up' }]);
  });
});

describe('update_entity_attributes', () => {
  const update = (attributes: Record<string, unknown>, slug = 'lxc:rclone'): EntityCommand => ({
    type: 'update_entity_attributes',
    slug,
    attributes: AttributesUpdate.parse({ attributes }).attributes,
  });

  it('records only the keys that change, null for a key removed', () => {
    expect(given(rcloneRegistered).when(update({ role: 'backup', kernel: '6.8.12', gone: null, mounts: ['/mnt/a'] }))).toEqual([
      { type: 'EntityAttributesUpdated', data: { attributes: { kernel: '6.8.12', mounts: ['/mnt/a'] } } },
    ]);
    expect(given(rcloneRegistered).when(update({ role: null }))).toEqual([{ type: 'EntityAttributesUpdated', data: { attributes: { role: null } } }]);
  });

  it('decides nothing when every key already holds its value, or is already absent', () => {
    const withFacts = given(rcloneRegistered, { type: 'EntityAttributesUpdated', data: { attributes: { disk: { size: '32G', pool: 'ludo' } } } });
    expect(withFacts.when(update({ disk: { pool: 'ludo', size: '32G' }, role: 'backup', never: null }))).toEqual([]);
    expect(given(rcloneRegistered).when(update({}))).toEqual([]);
  });

  it('refuses an unknown entity, and a merge past the cap on keys', () => {
    expect((given().refuses(update({ a: 1 }, 'lxc:nope')) as NotFound).code).toBe('unknown_entity');
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));
    const refusal = given(rcloneRegistered).refuses(update(many));
    expect((refusal as RuleViolation).rule).toBe('too_many_attributes');
    expect(refusal.message).toMatch(/101 attributes/);
  });
});

describe('create_relationship', () => {
  const relate = (to: string, relationship = 'backs_up', slug = 'lxc:rclone'): EntityCommand => ({ type: 'create_relationship', slug, to, relationship });

  it('records the relationship from this entity', () => {
    expect(given(rcloneRegistered).when(relate('host:strong'))).toEqual([{ type: 'RelationshipCreated', data: { to: 'host:strong', type: 'backs_up' } }]);
  });

  it('decides nothing for the same relationship again, but records another type to the same entity', () => {
    const related = given(rcloneRegistered, { type: 'RelationshipCreated', data: { to: 'host:strong', type: 'backs_up' } });
    expect(related.when(relate('host:strong'))).toEqual([]);
    expect(related.when(relate('host:strong', 'mounts'))).toEqual([{ type: 'RelationshipCreated', data: { to: 'host:strong', type: 'mounts' } }]);
  });

  it('refuses an unknown entity and a relationship to itself', () => {
    expect((given().refuses(relate('host:strong', 'hosts', 'host:nope')) as NotFound).code).toBe('unknown_entity');
    expect((given(rcloneRegistered).refuses(relate('lxc:rclone')) as RuleViolation).rule).toBe('self_relationship');
  });

  it('reads a relationship type as a lowercase word', () => {
    expect(RelationshipSpec.parse({ to: 'host:strong', type: ' Depends-On ' })).toEqual({ to: 'host:strong', type: 'depends_on' });
    expect(RelationshipSpec.safeParse({ to: 'host:strong', type: 'exports to!' }).success).toBe(false);
    expect(RelationshipSpec.safeParse({ to: 'pool:ludo', type: 'mounts' }).success).toBe(false);
  });
});

describe('a whole payload', () => {
  const known = (entries: Array<[string, EntityState]>) => new Map(entries);

  it('accepts a guest whose parent is registered or in the same payload', () => {
    expect(() => checkParents([spec(rcloneSpec)], known([['host:strong', fold(strongRegistered)]]))).not.toThrow();
    expect(() => checkParents([spec(rcloneSpec), spec(strongSpec)], known([['host:strong', null]]))).not.toThrow();
  });

  it('refuses a guest whose parent is unknown, naming the entity and the field', () => {
    const error = catchError(() => checkParents([spec(strongSpec), spec({ ...rcloneSpec, parent: 'host:ghost' })], known([['host:ghost', null]])));
    expect(error).toBeInstanceOf(RuleViolation);
    expect((error as RuleViolation).rule).toBe('unknown_parent');
    expect(error.message).toMatch(/entities\.1\.parent.*host:ghost/);
  });

  it('refuses a guest on a destroyed host, or on one the payload destroys', () => {
    const destroyed = fold(strongRegistered, stateChanged('active', 'destroyed'));
    expect((catchError(() => checkParents([spec(rcloneSpec)], known([['host:strong', destroyed]]))) as RuleViolation).rule).toBe('parent_destroyed');
    const both = [spec({ ...strongSpec, state: 'destroyed' }), spec(rcloneSpec)];
    expect((catchError(() => checkParents(both, known([['host:strong', fold(strongRegistered)]]))) as RuleViolation).rule).toBe('parent_destroyed');
    // A guest declared destroyed itself needs no live host.
    expect(() => checkParents([spec({ ...rcloneSpec, state: 'destroyed' })], known([['host:strong', destroyed]]))).not.toThrow();
  });

  it('registers hosts before their guests, otherwise in payload order', () => {
    const specs = [spec(rcloneSpec), spec({ slug: 'vm:zimaos', type: 'vm', parent: 'host:strong', pve_id: 200 }), spec(strongSpec)];
    expect(registrationOrder(specs)).toEqual([2, 0, 1]);
  });
});

describe('inventory schema', () => {
  const issues = (input: unknown) => {
    const result = InventoryPayload.safeParse(input);
    return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('reads one entity as an inventory of one', () => {
    expect(InventoryPayload.parse(rcloneSpec)).toEqual({ entities: [rcloneSpec] });
  });

  it.each([
    ['a slug whose prefix is not its type', { entities: [{ ...rcloneSpec, slug: 'host:rclone' }] }, /entities\.0\.slug: slug must be lxc:NAME/],
    ['a name too long', { entities: [{ ...rcloneSpec, slug: `lxc:${'a'.repeat(64)}` }] }, /entities\.0\.slug/],
    ['a name with a space', { entities: [{ ...rcloneSpec, slug: 'lxc:r clone' }] }, /entities\.0\.slug/],
    ['pve_id 0', { entities: [strongSpec, { ...rcloneSpec, pve_id: 0 }] }, /entities\.1\.pve_id: pve_id must be a positive integer/],
    ['a parent that is not a host', { entities: [{ ...rcloneSpec, parent: 'vm:x' }] }, /entities\.0\.parent: slug must be host:NAME/],
    ['an unknown type', { entities: [{ slug: 'pool:x', type: 'pool' }] }, /entities\.0\.type/],
    ['an unknown field', { entities: [{ ...rcloneSpec, colour: 'red' }] }, /colour/],
    ['ssh on a guest', { entities: [{ ...rcloneSpec, ssh: { host: 'x' } }] }, /ssh/],
    ['a host without ssh', { entities: [{ slug: 'host:a', type: 'host' }] }, /entities\.0\.ssh/],
    ['an ssh host that could be read as an option', { entities: [{ ...strongSpec, ssh: { host: '-oProxyCommand=x' } }] }, /entities\.0\.ssh\.host/],
    ['a malformed host key', { entities: [{ ...strongSpec, ssh: { host: 'a', host_key: 'AAAA' } }] }, /entities\.0\.ssh\.host_key: host_key must be "TYPE BASE64"/],
    ['duplicate slugs', { entities: [strongSpec, rcloneSpec, strongSpec] }, /entities\.2\.slug: duplicate slug host:strong \(also entities\.0\)/],
    ['an empty inventory', { entities: [] }, /entities/],
  ])('refuses %s, naming the entity and field', (_name, input, message) => {
    expect(issues(input).join('; ')).toMatch(message);
  });

  it('checks that a host key is "TYPE BASE64" of that type', () => {
    expect(hostKeyProblem(KEY_A)).toBeNull();
    expect(hostKeyProblem(sshKey('ecdsa-sha2-nistp256', 3))).toBeNull();
    expect(hostKeyProblem(sshKey('ssh-rsa', 4))).toBeNull();
    expect(hostKeyProblem(`ssh-rsa ${KEY_A.split(' ')[1]}`)).toMatch(/not a ssh-rsa key/);
    expect(hostKeyProblem('ssh-dss AAAAB3NzaC1kc3MAAACBAP')).toMatch(/not one of/);
    expect(hostKeyProblem('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA!')).toMatch(/TYPE BASE64/);
    expect(hostKeyProblem('ssh-ed25519 AAAAC3N')).toMatch(/base64/);
  });
});

function catchError(fn: () => void): Error {
  try {
    fn();
  } catch (error) {
    if (error instanceof Error) return error;
  }
  throw new Error('expected an error');
}
