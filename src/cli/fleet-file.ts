// Reads an inventory file for `nomos fleet import`: YAML or JSON, either `entities:` holding a list or a bare
// list (one entity on its own is read as a list of one). An entity's `type` may be left out when its slug says
// it (host:NAME), and a host's `ssh` may be written `user@address:port`. Every problem is reported at once,
// each by the file's own keys and the line it is on, before anything is sent to the server.
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { HostSpec, LxcSpec, VmSpec } from '../domain/entity/commands.ts';
import { FLEET_FILE_FORMAT } from './fleet-format.ts';

const SPECS = { host: HostSpec, lxc: LxcSpec, vm: VmSpec } as const;
type Kind = keyof typeof SPECS;
type Path = ReadonlyArray<string | number>;

/** Reads `file` into the entities to send, or throws an Error listing each problem with its line. */
export async function readFleetFile(file: string): Promise<unknown[]> {
  const text = await readFile(file, 'utf8');
  if (extname(file).toLowerCase() === '.json') {
    try {
      JSON.parse(text);
    } catch (error) {
      throw new Error(`${file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const where = (offset: number | undefined) => (offset === undefined ? file : `${file}:${lines.linePos(offset).line}`);
  if (doc.errors.length > 0) throw new Error(doc.errors.map((e) => `${where(e.pos[0])}: not valid YAML: ${e.message.split('\n')[0] ?? ''}`).join('\n'));

  const root: unknown = doc.toJS();
  const problems: string[] = [];
  const report = (path: Path, message: string, key = false) => problems.push(`${where(offsetOf(doc, path, key))}: ${label(path)}: ${message}`);

  let base: Path;
  let items: unknown[];
  if (Array.isArray(root)) {
    base = [];
    items = root;
  } else if (isObject(root) && 'entities' in root) {
    const others = Object.keys(root).filter((k) => k !== 'entities');
    for (const key of others) report([key], `unknown key; the file holds \`entities:\` and nothing else`, true);
    if (!Array.isArray(root.entities)) {
      report(['entities'], 'must be a list of entities, each with a slug');
      throw new Error(problems.join('\n'));
    }
    base = ['entities'];
    items = root.entities;
  } else if (isObject(root) && ('slug' in root || 'type' in root)) {
    const entity = normalize(root, [], report);
    if (entity === null) throw new Error(problems.join('\n'));
    return [entity];
  } else {
    const keys = isObject(root) ? Object.keys(root) : [];
    const found = keys.length > 0 ? `it has ${keys.map((k) => `\`${k}:\``).join(', ')}` : 'it holds no inventory';
    throw new Error(`${file}: ${found}; an inventory file is \`entities:\` with a list of entities, or a bare list:\n${FLEET_FILE_FORMAT}`);
  }
  if (items.length === 0) report(base, 'the list is empty');
  const entities = items.map((item, index) => normalize(item, [...base, index], report));
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return entities;
}

/** The entity with its type filled in and its ssh shorthand expanded; problems are reported, null then. */
function normalize(item: unknown, path: Path, report: (path: Path, message: string, key?: boolean) => void): Record<string, unknown> | null {
  if (!isObject(item)) {
    report(path, 'must be a map with a slug (e.g. slug: host:pve1)');
    return null;
  }
  const entity: Record<string, unknown> = { ...item };
  const prefix = typeof item.slug === 'string' ? /^(host|lxc|vm):/.exec(item.slug)?.[1] : undefined;
  if (item.type === undefined && prefix !== undefined) entity.type = prefix;
  const type = entity.type;
  if (type === undefined) {
    report([...path, 'slug'], item.slug === undefined ? 'missing: every entity needs a slug, host:NAME, lxc:NAME or vm:NAME' : 'must be host:NAME, lxc:NAME or vm:NAME (or give type: host, lxc or vm)');
    return null;
  }
  if (typeof type !== 'string' || !(type in SPECS)) {
    report([...path, 'type'], `${JSON.stringify(type)} is not host, lxc or vm`);
    return null;
  }
  if (typeof item.ssh === 'string') {
    const ssh = /^(?:([^@\s]+)@)?([^@:\s]+|\[[0-9a-fA-F:.]+\])(?::(\d{1,5}))?$/.exec(item.ssh);
    if (ssh === null) {
      report([...path, 'ssh'], 'write user@address:port, or a map {host, port, user}');
      return null;
    }
    entity.ssh = { host: ssh[2]!.replace(/^\[|\]$/g, ''), ...(ssh[1] !== undefined && { user: ssh[1] }), ...(ssh[3] !== undefined && { port: Number(ssh[3]) }) };
  }
  const parsed = (SPECS[type as Kind] as z.ZodType).safeParse(entity);
  if (parsed.success) return entity;
  for (const issue of parsed.error.issues) {
    const at = [...path, ...(issue.path as Array<string | number>)];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) report([...at, key], `unknown key for a ${type}${hint(type as Kind)}`, true);
    } else {
      report(at, issue.code === 'invalid_type' && issue.input === undefined ? 'missing' : issue.message);
    }
  }
  return null;
}

function hint(type: Kind): string {
  const common = 'slug, type, state, attributes';
  return type === 'host' ? ` (a host has ${common}, ssh)` : ` (a ${type} has ${common}, parent, pve_id)`;
}

/** Where `path` is in the document: its key's offset when `key`, else its value's (the nearest existing parent's when it is missing). */
function offsetOf(doc: Document, path: Path, key: boolean): number | undefined {
  for (let depth = path.length; depth >= 0; depth--) {
    const parent = doc.getIn(path.slice(0, depth - 1), true);
    const last = path[depth - 1];
    if (depth > 0 && isMap(parent) && (key || depth < path.length)) {
      const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === last);
      if (pair && isScalar(pair.key) && pair.key.range) return pair.key.range[0];
    }
    const node = doc.getIn(path.slice(0, depth), true) as { range?: [number, number, number] } | undefined;
    if (node?.range) return node.range[0];
  }
  return undefined;
}

/** entities[2].ssh.port, as the file's keys name it. */
function label(path: Path): string {
  if (path.length === 0) return '(the entity)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
