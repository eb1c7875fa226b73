// Tools with sub-commands (systemctl status, zfs list, pct config): the global options, then the sub-commands that
// only read, each with the options it takes and how many operands it may have while it still only reads.
import type { Judgement } from './judgement.ts';
import { OTHER, READS, unlisted } from './judgement.ts';
import type { OptionTable } from './option-table.ts';
import { readArgs } from './option-table.ts';
import type { Word } from './parse.ts';

export interface ReadVerb {
  readonly table?: OptionTable;
  /** Past this many operands the verb sets what it would show (`resolvectl dns eth0 1.1.1.1`). */
  readonly maxOperands?: number;
}

export interface VerbTool {
  readonly global: OptionTable;
  readonly verbs: Readonly<Record<string, ReadVerb>>;
  /** What no sub-command at all does: it only shows (systemctl, resolvectl), or it is another form. */
  readonly bare?: 'reads';
  /** Global options may also follow the sub-command (systemctl --no-pager status x and systemctl status x --no-pager). */
  readonly globalAnywhere?: boolean;
}

const EMPTY: OptionTable = {};

function merge(a: OptionTable, b: OptionTable): OptionTable {
  return {
    short: `${a.short ?? ''}${b.short ?? ''}`,
    long: `${a.long ?? ''} ${b.long ?? ''}`,
    words: `${a.words ?? ''} ${b.words ?? ''}`,
    values: { ...a.values, ...b.values },
  };
}

const merged = new WeakMap<VerbTool, Map<ReadVerb, OptionTable>>();

/** Judges `tool [global options] verb [options] operands`. */
export function judgeVerbs(args: readonly Word[], tool: VerbTool): Judgement {
  const global = readArgs(args, { ...tool.global, stopAtOperand: true });
  if (!global.ok) return unlisted(global.why);
  const [verbWord, ...rest] = global.operands;
  if (verbWord === undefined) return tool.bare === 'reads' ? READS : OTHER;
  if (verbWord.value === undefined) return unlisted(`${verbWord.text} is only known at run time`);
  const verb = Object.hasOwn(tool.verbs, verbWord.value) ? tool.verbs[verbWord.value] : undefined;
  if (verb === undefined) return OTHER;
  let table = verb.table ?? EMPTY;
  if (tool.globalAnywhere === true) {
    const byVerb = merged.get(tool) ?? new Map<ReadVerb, OptionTable>();
    merged.set(tool, byVerb);
    table = byVerb.get(verb) ?? merge(tool.global, table);
    byVerb.set(verb, table);
  }
  const reading = readArgs(rest, table);
  if (!reading.ok) return unlisted(reading.why);
  return verb.maxOperands !== undefined && reading.operands.length > verb.maxOperands ? OTHER : READS;
}

/** The same verb options for several verbs. */
export function verbs(names: string, verb: ReadVerb = {}): Record<string, ReadVerb> {
  return Object.fromEntries(names.split(/\s+/).filter((n) => n !== '').map((n) => [n, verb]));
}
