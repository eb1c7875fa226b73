// The knowledge decider: given events → when upsert_knowledge → then events (or the rule it breaks), and the
// schema that normalises what the agent sends (titles, tags, about) and the key an item is found by.
import { describe, expect, it } from 'vitest';
import { type KnowledgeCommand, UpsertKnowledge, type UpsertKnowledgeInput, knowledgeTitleKey } from '../../src/domain/knowledge/commands.ts';
import { decide } from '../../src/domain/knowledge/decide.ts';
import type { KnowledgeEvent } from '../../src/domain/knowledge/events.ts';
import { type KnowledgeState, evolve, initialKnowledgeState } from '../../src/domain/knowledge/state.ts';
import { RuleViolation } from '../../src/domain/messages.ts';

const ID = '6f1c7f3e-4a55-4a0e-9b1e-0d6f3f2b8a11';
const SESSION = '1e9c7691-5815-48d1-acb4-91a6a39691c9';

const upsert = (input: UpsertKnowledgeInput): KnowledgeCommand => ({ type: 'upsert_knowledge', knowledge_id: ID, ...UpsertKnowledge.parse(input) });
const fold = (...events: KnowledgeEvent[]): KnowledgeState => events.reduce(evolve, initialKnowledgeState);
const given = (...events: KnowledgeEvent[]) => ({ when: (command: KnowledgeCommand) => decide(command, fold(...events)) });

const runbook = {
  kind: 'runbook' as const,
  title: 'Mutating an exported NFS directory',
  body: 'knfsd holds a lock: `exportfs -u`, then chown, then `exportfs -a`.',
  about: ['host:strong', 'lxc:nfs-export'],
  tags: ['nfs', 'knfsd'],
};

const recorded: KnowledgeEvent = {
  type: 'KnowledgeRecorded',
  data: { knowledge_id: ID, kind: 'runbook', title: runbook.title, body: runbook.body, about: [...runbook.about], tags: [...runbook.tags], session_id: SESSION },
};

describe('upsert_knowledge', () => {
  it('records a new item, with the session that wrote it', () => {
    expect(given().when(upsert({ ...runbook, session_id: SESSION }))).toEqual([recorded]);
  });

  it('records a general note about nothing, with no tags and no session', () => {
    expect(given().when(upsert({ kind: 'note', title: 'Fleet conventions', body: 'Hosts are named after virtues.', about: [] }))).toEqual([
      { type: 'KnowledgeRecorded', data: { knowledge_id: ID, kind: 'note', title: 'Fleet conventions', body: 'Hosts are named after virtues.', about: [], tags: [], session_id: null } },
    ]);
  });

  it('decides nothing for the same content again, whatever the order of about and tags, or spacing and case of the tags', () => {
    expect(given(recorded).when(upsert(runbook))).toEqual([]);
    expect(given(recorded).when(upsert({ ...runbook, about: ['lxc:nfs-export', 'host:strong'], tags: [' KNFSD', 'nfs', 'nfs'] }))).toEqual([]);
  });

  it('updates only what changed, naming the session that changed it', () => {
    const body = `${runbook.body}\n\nKill the piled-up chown first: \`killall -9 chgrp chown\`.`;
    expect(given(recorded).when(upsert({ ...runbook, body, about: [...runbook.about, 'vm:zimaos'], session_id: SESSION }))).toEqual([
      { type: 'KnowledgeUpdated', data: { body, about: ['host:strong', 'lxc:nfs-export', 'vm:zimaos'], session_id: SESSION } },
    ]);
  });

  it('keeps the tags when an update omits them, and replaces them when it sends them', () => {
    const { tags: _omitted, ...untagged } = runbook;
    expect(given(recorded).when(upsert(untagged))).toEqual([]);
    expect(given(recorded).when(upsert({ ...runbook, tags: [] }))).toEqual([{ type: 'KnowledgeUpdated', data: { tags: [], session_id: null } }]);
  });

  it('takes a title that differs only in case as the same item, and records its new spelling', () => {
    expect(given(recorded).when(upsert({ ...runbook, title: '  mutating an EXPORTED   nfs directory ' }))).toEqual([
      { type: 'KnowledgeUpdated', data: { title: 'mutating an EXPORTED nfs directory', session_id: null } },
    ]);
  });

  it('refuses to decide an item under another key than its own', () => {
    expect(() => given(recorded).when(upsert({ ...runbook, kind: 'investigation' }))).toThrow(RuleViolation);
    expect(() => given(recorded).when(upsert({ ...runbook, title: 'Something else' }))).toThrow(/knowledge_key_mismatch|is the runbook/);
  });

  it('folds an update over the recorded item', () => {
    const state = fold(recorded, { type: 'KnowledgeUpdated', data: { body: 'new body', tags: ['nfs'], session_id: null } });
    expect(state).toEqual({ id: ID, kind: 'runbook', title: runbook.title, body: 'new body', about: ['host:strong', 'lxc:nfs-export'], tags: ['nfs'] });
  });
});

describe('the upsert schema and the key', () => {
  it('normalises the key: trimmed, spaces collapsed, lowercase', () => {
    expect(knowledgeTitleKey('  NFS   export\tHangs ')).toBe('nfs export hangs');
  });

  it('accepts slugs of things outside the inventory, and drops repeated ones', () => {
    expect(UpsertKnowledge.parse({ ...runbook, about: ['pool:ludo-lvm', 'host:strong', 'pool:ludo-lvm'] }).about).toEqual(['pool:ludo-lvm', 'host:strong']);
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['a blank title', { ...runbook, title: '   ' }, /^title/],
    ['an empty body', { ...runbook, body: '' }, /^body/],
    ['a body with NUL', { ...runbook, body: 'a\0b' }, /^body: must not contain a NUL/],
    ['a kind that is not one', { ...runbook, kind: 'howto' }, /^kind/],
    ['an about that is not a slug', { ...runbook, about: ['strong'] }, /^about\.0/],
    ['too many tags', { ...runbook, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, /^tags/],
    ['an unknown field', { ...runbook, colour: 'red' }, /colour/],
  ];
  it.each(bad)('refuses %s, naming the field', (_name, input, message) => {
    const parsed = UpsertKnowledge.safeParse(input);
    expect(parsed.success).toBe(false);
    const issue = parsed.error?.issues[0];
    expect(`${issue?.path.join('.')}: ${issue?.message}`).toMatch(message);
  });
});
