// NOMOS_NOTIFY and NOMOS_NOTIFY_FILE: several channels at once, from URLs and from YAML; a channel that cannot
// work stops the start with a message naming the entry and the key at fault, never the secret.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

describe('notification channels in the configuration', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nomos-notify-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads several channels from NOMOS_NOTIFY and the file together', async () => {
    const file = join(dir, 'notify.yaml');
    await writeFile(file, `channels:\n  - type: gotify\n    url: https://gotify.example.org\n    token: AbCdEf\n    events: [approval_requested, approval_expiring]\n`);
    const config = loadConfig({
      NOMOS_NOTIFY: `webhook:https://hooks.example.org/nomos?secret=${encodeURIComponent(SECRET)} ntfy:https://ntfy.sh/ops?token=tk_1&events=approval_requested smtp://bot:pw%40x@mail.example.org:2525?from=nomos@example.org&to=a@example.org;b@example.org`,
      NOMOS_NOTIFY_FILE: file,
      NOMOS_PUBLIC_URL: 'https://nomos.example.org',
    });
    expect(config.notify.publicUrl).toBe('https://nomos.example.org');
    expect(config.notify.channels.map((c) => [c.type, c.name])).toEqual([
      ['webhook', 'webhook:hooks.example.org'],
      ['ntfy', 'ntfy:ntfy.sh'],
      ['smtp', 'smtp:mail.example.org:2525'],
      ['gotify', 'gotify:gotify.example.org'],
    ]);
    expect(config.notify.channels[1]).toMatchObject({ url: 'https://ntfy.sh/ops', token: 'tk_1', events: ['approval_requested'] });
    expect(config.notify.channels[2]).toMatchObject({ host: 'mail.example.org', port: 2525, secure: false, user: 'bot', password: 'pw@x', to: ['a@example.org', 'b@example.org'] });
    expect(config.notify.channels[3]).toMatchObject({ url: 'https://gotify.example.org/', token: 'AbCdEf', events: ['approval_requested', 'approval_expiring'] });
    expect(loadConfig({}).notify.channels).toEqual([]);
  });

  it.each([
    ['a type it does not know', { NOMOS_NOTIFY: 'slack:https://hooks.slack.com/x' }, /NOMOS_NOTIFY entry 1: type: "slack" is not a channel type/],
    ['a webhook without its secret', { NOMOS_NOTIFY: 'webhook:https://hooks.example.org/x' }, /NOMOS_NOTIFY entry 1 \(webhook:hooks.example.org\): secret: missing/],
    ['a secret that is not whsec_', { NOMOS_NOTIFY: 'webhook:https://hooks.example.org/x?secret=hunter2hunter2' }, /secret: must be whsec_/],
    ['an unknown kind of event', { NOMOS_NOTIFY: 'ntfy:https://ntfy.sh/ops?events=approval_granted' }, /events: approval_granted is not one of/],
    ['a mail without recipients', { NOMOS_NOTIFY: 'smtp://mail.example.org?from=nomos@example.org' }, /NOMOS_NOTIFY entry 1 \(smtp:mail.example.org\): to: missing/],
    ['a Gotify channel without its token', { NOMOS_NOTIFY: 'gotify:https://gotify.example.org' }, /token: missing/],
    ['a public URL that is not http(s)', { NOMOS_PUBLIC_URL: 'ftp://nomos.example.org' }, /NOMOS_PUBLIC_URL/],
  ])('refuses %s, naming the key', (_what, env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('never echoes a secret in the message', () => {
    const leaked = 'whsec_c2hvcnQ=';
    const error = (() => {
      try {
        loadConfig({ NOMOS_NOTIFY: `webhook:https://hooks.example.org/x?secret=${leaked}` });
      } catch (e) {
        return e as Error;
      }
      throw new Error('accepted');
    })();
    expect(error.message).toMatch(/^bad configuration: NOMOS_NOTIFY entry 1/);
    expect(error.message).not.toContain('c2hvcnQ');
  });

  it("names the file's entry and key, and a file it cannot read", async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'channels:\n  - type: ntfy\n    url: https://ntfy.sh/ops\n    topic: ops\n');
    expect(() => loadConfig({ NOMOS_NOTIFY_FILE: file })).toThrow(`bad configuration: NOMOS_NOTIFY_FILE ${file} channels[0] (ntfy:ntfy.sh): topic: not a channel setting`);
    expect(() => loadConfig({ NOMOS_NOTIFY_FILE: join(dir, 'missing.yaml') })).toThrow(/NOMOS_NOTIFY_FILE: cannot read .*missing.yaml \(ENOENT\)/);
  });
});
