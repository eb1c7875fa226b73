// What a redirection does to a file: whether it writes one, and whether it empties it first.
import type { Redirect } from './parse.ts';

const HARMLESS_TARGETS = ['/dev/null', '/dev/stdout', '/dev/stderr'];
const WRITE_OPS: readonly string[] = ['>', '>>', '>|', '&>', '&>>', '<>'];
const TRUNCATE_OPS: readonly string[] = ['>', '>|', '&>'];

// `>&2` and `2>&1` duplicate a descriptor; `>&file` (bash) writes to a file, truncating it.
const duplicatesDescriptor = ({ op, target }: Redirect): boolean => op === '>&' && target.value !== undefined && /^(\d+|-)$/.test(target.value);
const harmless = ({ target }: Redirect): boolean => target.value !== undefined && HARMLESS_TARGETS.includes(target.value);

export function writesFile(redirect: Redirect): boolean {
  if (redirect.op === '>&') return !duplicatesDescriptor(redirect);
  return WRITE_OPS.includes(redirect.op) && !harmless(redirect);
}

/** True when the redirection empties its file before anything is written (`>`, `>|`, `&>`, `>&file`). */
export function truncatesFile(redirect: Redirect): boolean {
  if (redirect.op === '>&') return !duplicatesDescriptor(redirect);
  return TRUNCATE_OPS.includes(redirect.op) && !harmless(redirect);
}
