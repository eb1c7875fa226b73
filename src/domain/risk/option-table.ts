// Read-only option tables: the options a tool may be given while it still only reads, written the way getopt reads
// them so a reviewer can check each line against the tool's man page or --help. An option a table does not list
// (or a word only known at run time that could be one) makes the command not read-only.
import type { Word } from './parse.ts';

export interface OptionTable {
  /** getopt's short options: a letter takes no value, `x:` takes one (attached or the next word), `x::` only attached. */
  readonly short?: string;
  /** Long options after `--`, space-separated: `name` takes no value, `name=` takes one (`=v` or the next word), `name=?` only `=v`. */
  readonly long?: string;
  /** Whole-word options after one dash (find's `-name`, ip's `-brief`), with the same value suffixes as `long`. */
  readonly words?: string;
  /** `-NUM` is an option (head -5, tail -20). */
  readonly numeric?: boolean;
  /** Options end at the first operand, as POSIX getopt reads (ssh, env), instead of GNU's permutation. */
  readonly stopAtOperand?: boolean;
  /**
   * Every option the tool has (per its man page) is listed and only reads, so a word known only at run time is taken
   * for an operand: whatever it turns out to be, the command still only reads. Without this such a word is refused.
   */
  readonly everyOptionReads?: boolean;
  /** No word is an option: everything is printed, compared or waited on (echo, test, sleep). */
  readonly freeForm?: boolean;
  /** Checks an option's value must pass, by option name as written in the table (`-o`, `--output`, `-name`). */
  readonly values?: Readonly<Record<string, (value: string) => boolean>>;
  /** Why the operands are not read-only (uniq's second operand is its output file), or undefined. */
  readonly operands?: (operands: readonly Word[]) => string | undefined;
  /** Why options taken together are not read-only (curl's data without -G is a POST), or undefined. */
  readonly together?: (options: readonly ReadOption[]) => string | undefined;
}

export interface ReadOption {
  readonly name: string;
  /** The value, '' for an option that takes none, undefined when only known at run time. */
  readonly value: string | undefined;
}

export type ArgsReading =
  | { readonly ok: true; readonly options: readonly ReadOption[]; readonly operands: readonly Word[] }
  | { readonly ok: false; readonly why: string };

type Arity = 'none' | 'required' | 'optional';

interface Compiled {
  readonly table: OptionTable;
  readonly short: ReadonlyMap<string, Arity>;
  readonly long: ReadonlyMap<string, Arity>;
  readonly words: ReadonlyMap<string, Arity>;
}

function shortArities(spec: string): Map<string, Arity> {
  const map = new Map<string, Arity>();
  for (let i = 0; i < spec.length; i++) {
    const letter = spec.charAt(i);
    if (spec.startsWith('::', i + 1)) {
      map.set(letter, 'optional');
      i += 2;
    } else if (spec.charAt(i + 1) === ':') {
      map.set(letter, 'required');
      i += 1;
    } else map.set(letter, 'none');
  }
  return map;
}

function namedArities(spec: string | undefined): Map<string, Arity> {
  const map = new Map<string, Arity>();
  for (const entry of (spec ?? '').split(/\s+/).filter((e) => e !== '')) {
    if (entry.endsWith('=?')) map.set(entry.slice(0, -2), 'optional');
    else if (entry.endsWith('=')) map.set(entry.slice(0, -1), 'required');
    else map.set(entry, 'none');
  }
  return map;
}

const compiled = new WeakMap<OptionTable, Compiled>();

function compile(table: OptionTable): Compiled {
  const known = compiled.get(table);
  if (known !== undefined) return known;
  const result = { table, short: shortArities(table.short ?? ''), long: namedArities(table.long), words: namedArities(table.words) };
  compiled.set(table, result);
  return result;
}

/** Every option name a table lists, as written on a command line (`-n`, `--lines`, `-name`), for tests and docs. */
export function listedOptions(table: OptionTable): { name: string; arity: Arity }[] {
  const c = compile(table);
  return [
    ...[...c.short].map(([l, arity]) => ({ name: `-${l}`, arity })),
    ...[...c.long].map(([n, arity]) => ({ name: `--${n}`, arity })),
    ...[...c.words].map(([n, arity]) => ({ name: `-${n}`, arity })),
  ];
}

const refuse = (why: string): ArgsReading => ({ ok: false, why });
const runTime = (w: Word): string => `${w.text} is only known at run time and could be an option`;

/** Reads a command's arguments against its table: the options and operands, or why they are not read-only. */
export function readArgs(args: readonly Word[], table: OptionTable): ArgsReading {
  const c = compile(table);
  const options: ReadOption[] = [];
  const operands: Word[] = [];
  let optionsEnded = table.freeForm === true;
  const take = (name: string, value: string | undefined): string | undefined => {
    const check = table.values?.[name];
    options.push({ name, value });
    if (check === undefined) return undefined;
    if (value === undefined) return `the value of ${name} is only known at run time`;
    return check(value) ? undefined : `${name} ${value} is not read-only`;
  };
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (word === undefined) break;
    const value = word.value;
    if (optionsEnded) {
      operands.push(word);
      continue;
    }
    if (value === undefined) {
      if (word.prefix.startsWith('-') && word.prefix !== '-') {
        const why = dynamicOption(c, word, take);
        if (why !== undefined) return refuse(why);
        continue;
      }
      if (word.prefix === '' && !table.everyOptionReads) return refuse(runTime(word));
      operands.push(word);
      if (table.stopAtOperand === true) optionsEnded = true;
      continue;
    }
    if (value === '--') {
      optionsEnded = true;
      continue;
    }
    if (value === '-' || !value.startsWith('-')) {
      operands.push(word);
      if (table.stopAtOperand === true) optionsEnded = true;
      continue;
    }
    if (table.numeric === true && /^-\d+$/.test(value)) {
      options.push({ name: value, value: '' });
      continue;
    }
    const next = (): string | undefined => {
      i++;
      return args[i]?.value;
    };
    const why = value.startsWith('--') ? longOption(c, value, next, take) : wordOrShort(c, value, next, take);
    if (why !== undefined) return refuse(why);
  }
  const bad = table.operands?.(operands) ?? table.together?.(options);
  return bad === undefined ? { ok: true, options, operands } : refuse(bad);
}

type Take = (name: string, value: string | undefined) => string | undefined;

function named(map: ReadonlyMap<string, Arity>, dashes: string, value: string, next: () => string | undefined, take: Take): string | undefined {
  const eq = value.indexOf('=');
  const name = eq === -1 ? value : value.slice(0, eq);
  const arity = map.get(name.slice(dashes.length));
  if (arity === undefined) return `${name} is not an option known to only read`;
  if (eq !== -1) return arity === 'none' ? `${name} takes no value` : take(name, value.slice(eq + 1));
  return take(name, arity === 'required' ? next() : '');
}

function longOption(c: Compiled, value: string, next: () => string | undefined, take: Take): string | undefined {
  // Tools reading whole words after one dash often take two as well (sqlite3 --header); a table says which by listing.
  if (c.long.size === 0 && c.words.size > 0) return named(c.words, '--', value, next, take);
  return named(c.long, '--', value, next, take);
}

function wordOrShort(c: Compiled, value: string, next: () => string | undefined, take: Take): string | undefined {
  const name = value.split('=')[0] ?? value;
  if (c.words.has(name.slice(1)) || c.short.size === 0) return named(c.words, '-', value, next, take);
  for (let j = 1; j < value.length; j++) {
    const letter = value.charAt(j);
    const arity = c.short.get(letter);
    if (arity === undefined) return `-${letter} is not an option known to only read`;
    if (arity === 'none') {
      const why = take(`-${letter}`, '');
      if (why !== undefined) return why;
      continue;
    }
    const rest = value.slice(j + 1);
    if (rest !== '') return take(`-${letter}`, rest);
    return take(`-${letter}`, arity === 'required' ? next() : '');
  }
  return undefined;
}

/** A word like `-n"$N"` or `--lines=$N`: its known start must be options ending in one whose value is the unknown rest. */
function dynamicOption(c: Compiled, word: Word, take: Take): string | undefined {
  const prefix = word.prefix;
  if (prefix.startsWith('--') || c.short.size === 0) {
    const eq = prefix.indexOf('=');
    if (eq === -1) return runTime(word);
    const name = prefix.slice(0, eq);
    const map = prefix.startsWith('--') && c.long.size > 0 ? c.long : c.words;
    const arity = map.get(name.replace(/^--?/, ''));
    return arity === undefined || arity === 'none' ? runTime(word) : take(name, undefined);
  }
  for (let j = 1; j < prefix.length; j++) {
    const letter = prefix.charAt(j);
    const arity = c.short.get(letter);
    if (arity === undefined) return `-${letter} is not an option known to only read`;
    if (arity !== 'none') return take(`-${letter}`, undefined);
  }
  return runTime(word);
}
