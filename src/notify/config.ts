// Reads the operator's channels from NOMOS_NOTIFY (channel URLs, separated by spaces or commas) and from the YAML
// file NOMOS_NOTIFY_FILE (a `channels:` list), both at once. Pure but for nothing: the file's text is passed in. A
// channel that cannot work stops the start with a message naming the channel (never its secret) and the key.
import { parse as parseYaml } from 'yaml';
import { type Channel, NOTIFICATION_KINDS, type NotificationKind } from './channels.ts';

/** A channel before it is checked: what one URL or one YAML entry says. */
interface RawChannel {
  type: string;
  url?: string;
  name?: string;
  secret?: string;
  token?: string;
  user?: string;
  password?: string;
  from?: string;
  to?: string[];
  events?: string[];
}

const YAML_KEYS = new Set(['type', 'url', 'name', 'secret', 'token', 'user', 'password', 'from', 'to', 'events']);
const TYPES = ['webhook', 'ntfy', 'gotify', 'smtp'] as const;

class ChannelProblem extends Error {}

/** Every channel configured: NOMOS_NOTIFY's first, then the file's. */
export function parseNotifyChannels(spec: string, file: { readonly path: string; readonly text: string } | null): Channel[] {
  const raws: Array<{ where: string; raw: RawChannel }> = [];
  const entries = spec.split(/\s+|,(?=\s*(?:webhook|ntfy|gotify|smtps?):)/).filter((e) => e.trim() !== '');
  entries.forEach((entry, i) => raws.push({ where: `NOMOS_NOTIFY entry ${i + 1}`, raw: fromUrl(entry.trim(), `NOMOS_NOTIFY entry ${i + 1}`) }));
  if (file) raws.push(...fromYaml(file.path, file.text));
  const channels: Channel[] = [];
  const named = new Map<string, number>();
  for (const { where, raw } of raws) {
    let channel: Channel;
    try {
      channel = check(raw);
    } catch (error) {
      if (error instanceof ChannelProblem) throw new Error(`bad configuration: ${where} (${describe(raw)}): ${error.message}`);
      throw error;
    }
    const seen = named.get(channel.name) ?? 0;
    if (seen > 0 && raw.name !== undefined) throw new Error(`bad configuration: ${where}: name: ${channel.name} names another channel already`);
    named.set(channel.name, seen + 1);
    channels.push(seen > 0 ? { ...channel, name: `${channel.name}#${seen + 1}` } : channel);
  }
  return channels;
}

/** What a problem names a channel by: its type and host, never a secret. */
function describe(raw: RawChannel): string {
  return raw.name ?? `${raw.type}:${hostOf(raw.url) ?? '?'}`;
}

function hostOf(url: string | undefined): string | null {
  if (url === undefined) return null;
  try {
    return new URL(url).host || null;
  } catch {
    return null;
  }
}

/** One NOMOS_NOTIFY entry: type:URL, with the channel's settings as query parameters taken out of the URL. */
function fromUrl(entry: string, where: string): RawChannel {
  const smtp = /^smtps?:\/\//.test(entry);
  const colon = entry.indexOf(':');
  const type = smtp ? 'smtp' : entry.slice(0, colon);
  if (!smtp && !(TYPES as readonly string[]).includes(type)) {
    throw new Error(`bad configuration: ${where}: type: "${type.slice(0, 40)}" is not a channel type; write webhook:URL?secret=whsec_…, ntfy:URL, gotify:URL?token=…, or smtp(s)://[user:password@]host[:port]?from=…&to=…`);
  }
  let url: URL;
  try {
    url = new URL(smtp ? entry : entry.slice(colon + 1));
  } catch {
    throw new Error(`bad configuration: ${where} (${type}): url: not a URL`);
  }
  const raw: RawChannel = { type };
  const take = (key: string): string | undefined => {
    const value = url.searchParams.get(key);
    url.searchParams.delete(key);
    return value ?? undefined;
  };
  const name = take('name');
  if (name !== undefined) raw.name = name;
  const events = take('events');
  if (events !== undefined) raw.events = events.split(/[,;]/).filter((e) => e !== '');
  if (type === 'webhook') {
    const secret = take('secret');
    if (secret !== undefined) raw.secret = secret;
  } else if (type === 'ntfy' || type === 'gotify') {
    const token = take('token');
    if (token !== undefined) raw.token = token;
  } else {
    const from = take('from');
    if (from !== undefined) raw.from = from;
    const to = url.searchParams.getAll('to').flatMap((t) => t.split(/[;,]/)).filter((t) => t !== '');
    url.searchParams.delete('to');
    if (to.length > 0) raw.to = to;
    const unknown = [...url.searchParams.keys()];
    if (unknown.length > 0) throw new Error(`bad configuration: ${where} (smtp:${url.host}): ${unknown[0]}: not a setting of an smtp channel (from, to, name, events)`);
    if (url.username !== '') raw.user = decodeURIComponent(url.username);
    if (url.password !== '') raw.password = decodeURIComponent(url.password);
    url.username = '';
    url.password = '';
  }
  raw.url = url.toString();
  return raw;
}

/** The file's `channels:` list, each entry checked for keys it does not know. */
function fromYaml(path: string, text: string): Array<{ where: string; raw: RawChannel }> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new Error(`bad configuration: NOMOS_NOTIFY_FILE ${path}: not YAML (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`bad configuration: NOMOS_NOTIFY_FILE ${path}: write a mapping with a \`channels:\` list`);
  const extra = Object.keys(doc).filter((k) => k !== 'channels');
  if (extra.length > 0) throw new Error(`bad configuration: NOMOS_NOTIFY_FILE ${path}: ${extra[0]}: not a key of the file (only \`channels\`)`);
  const list = (doc as { channels?: unknown }).channels;
  if (!Array.isArray(list)) throw new Error(`bad configuration: NOMOS_NOTIFY_FILE ${path}: channels: must be a list`);
  return list.map((entry: unknown, i) => {
    const where = `NOMOS_NOTIFY_FILE ${path} channels[${i}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new Error(`bad configuration: ${where}: must be a mapping (type, url, …)`);
    const record = entry as Record<string, unknown>;
    const unknown = Object.keys(record).find((k) => !YAML_KEYS.has(k));
    const label = `${typeof record.type === 'string' ? record.type : '?'}:${hostOf(typeof record.url === 'string' ? record.url : undefined) ?? '?'}`;
    if (unknown !== undefined) throw new Error(`bad configuration: ${where} (${label}): ${unknown}: not a channel setting (${[...YAML_KEYS].join(', ')})`);
    const raw: RawChannel = { type: '' };
    for (const [key, value] of Object.entries(record)) {
      if (key === 'to' || key === 'events') {
        const values = typeof value === 'string' ? value.split(/[,;]\s*/) : value;
        if (!Array.isArray(values) || !values.every((v) => typeof v === 'string')) throw new Error(`bad configuration: ${where} (${label}): ${key}: must be a list of strings`);
        raw[key] = values;
      } else if (typeof value === 'string' || typeof value === 'number') {
        raw[key as Exclude<keyof RawChannel, 'to' | 'events'>] = String(value);
      } else {
        throw new Error(`bad configuration: ${where} (${label}): ${key}: must be a string`);
      }
    }
    return { where, raw };
  });
}

/** A checked channel, or a ChannelProblem naming the key at fault. */
function check(raw: RawChannel): Channel {
  if (!(TYPES as readonly string[]).includes(raw.type)) throw new ChannelProblem(`type: must be one of ${TYPES.join(', ')}`);
  if (raw.url === undefined) throw new ChannelProblem('url: missing');
  let url: URL;
  try {
    url = new URL(raw.url);
  } catch {
    throw new ChannelProblem('url: not a URL');
  }
  const events = (raw.events ?? [...NOTIFICATION_KINDS]).map((e) => {
    if (!(NOTIFICATION_KINDS as readonly string[]).includes(e)) throw new ChannelProblem(`events: ${e.slice(0, 40)} is not one of ${NOTIFICATION_KINDS.join(', ')}`);
    return e as NotificationKind;
  });
  if (events.length === 0) throw new ChannelProblem('events: empty (leave it out for every kind)');
  const name = raw.name ?? `${raw.type}:${url.host}`;
  if (name.length > 100 || !/^[\w.:@#/-]+$/.test(name)) throw new ChannelProblem('name: 1 to 100 letters, digits and . : @ # / - _');
  const base = { name, events };
  if (raw.type === 'smtp') return checkSmtp(raw, url, base);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ChannelProblem('url: must be http:// or https://');
  if (url.username !== '' || url.password !== '') throw new ChannelProblem('url: carries credentials; give the secret or token as its own setting');
  const foreign: ReadonlyArray<keyof RawChannel> = ['user', 'password', 'from', 'to', raw.type === 'webhook' ? 'token' : 'secret'];
  const misplaced = foreign.find((k) => raw[k] !== undefined);
  if (misplaced !== undefined) throw new ChannelProblem(`${misplaced}: not a setting of a ${raw.type} channel`);
  switch (raw.type) {
    case 'webhook': {
      const secret = raw.secret;
      if (secret === undefined) throw new ChannelProblem('secret: missing (whsec_ followed by a base64 key of 24 to 64 bytes)');
      const key = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret)?.[1];
      const bytes = key === undefined ? 0 : Buffer.from(key, 'base64').length;
      if (bytes < 24 || bytes > 64) throw new ChannelProblem('secret: must be whsec_ followed by a base64 key of 24 to 64 bytes (Standard Webhooks)');
      return { type: 'webhook', ...base, url: url.toString(), secret };
    }
    case 'ntfy': {
      if (url.pathname.replace(/\//g, '') === '') throw new ChannelProblem('url: must name the topic (https://ntfy.example/TOPIC)');
      return { type: 'ntfy', ...base, url: url.toString(), token: raw.token ?? null };
    }
    case 'gotify': {
      if (raw.token === undefined || raw.token === '') throw new ChannelProblem("token: missing (the Gotify application's token)");
      return { type: 'gotify', ...base, url: url.toString(), token: raw.token };
    }
    default:
      throw new ChannelProblem(`type: must be one of ${TYPES.join(', ')}`);
  }
}

function checkSmtp(raw: RawChannel, url: URL, base: { name: string; events: NotificationKind[] }): Channel {
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new ChannelProblem('url: must be smtp:// or smtps://');
  if (url.hostname === '') throw new ChannelProblem('url: names no host');
  const misplaced = (['secret', 'token'] as const).find((k) => raw[k] !== undefined);
  if (misplaced !== undefined) throw new ChannelProblem(`${misplaced}: not a setting of an smtp channel (give user and password)`);
  const secure = url.protocol === 'smtps:';
  const port = url.port === '' ? (secure ? 465 : 587) : Number(url.port);
  const address = /^[^\s@<>]+@[^\s@<>]+$/;
  if (raw.from === undefined || !address.test(raw.from)) throw new ChannelProblem('from: missing or not an address (from=nomos@example.org)');
  const to = raw.to ?? [];
  if (to.length === 0) throw new ChannelProblem('to: missing (to=ops@example.org, several separated by ;)');
  const bad = to.find((t) => !address.test(t));
  if (bad !== undefined) throw new ChannelProblem(`to: ${bad.slice(0, 80)} is not an address`);
  const user = raw.user ?? (url.username === '' ? null : decodeURIComponent(url.username));
  const password = raw.password ?? (url.password === '' ? null : decodeURIComponent(url.password));
  if ((user === null) !== (password === null)) throw new ChannelProblem('user and password go together');
  return { type: 'smtp', ...base, host: url.hostname.replace(/^\[|\]$/g, ''), port, secure, user, password, from: raw.from, to };
}
