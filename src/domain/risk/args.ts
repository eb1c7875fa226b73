// A simple command as the rules see it (its name and arguments) and the questions rules ask of its arguments.
import type { Redirect, Word } from './parse.ts';

export interface Invocation {
  /** The command's base name (`/usr/bin/rm` → `rm`), or undefined when it is only known at run time. */
  readonly name: string | undefined;
  /** The program as written (`./x.sh`, `/usr/sbin/zfs`, `ls`), or undefined when it is only known at run time. */
  readonly path: string | undefined;
  readonly args: readonly Word[];
  readonly redirects: readonly Redirect[];
  /** The normalised command line, for reasons and `inner_commands`. */
  readonly text: string;
}

export function invocation(argv: readonly Word[], redirects: readonly Redirect[] = []): Invocation {
  const [head, ...args] = argv;
  const name = head?.value?.split('/').pop();
  return { name: name === '' ? undefined : name, path: head?.value, args, redirects, text: argv.map((w) => w.text).join(' ') };
}

/** Known argument values; a word only known at run time is ''. */
export function values(inv: Invocation): string[] {
  return inv.args.map((w) => w.value ?? '');
}

/** Arguments before a `--` end-of-options marker. */
function optionArgs(inv: Invocation): readonly Word[] {
  const end = inv.args.findIndex((w) => w.value === '--');
  return end === -1 ? inv.args : inv.args.slice(0, end);
}

/** True when a short option cluster (`-rf`) holds one of `letters`, or a long option (`--force`, `--force=x`) is one of `longs`. */
export function hasFlag(inv: Invocation, letters: string, longs: readonly string[] = []): boolean {
  return optionArgs(inv).some(({ value }) => {
    if (value === undefined) return false;
    if (value.startsWith('--')) return longs.some((long) => value === long || value.startsWith(`${long}=`));
    return value.startsWith('-') && [...value.slice(1)].some((c) => letters.includes(c));
  });
}

/** True when one of these exact words (or `word=…`) is an argument: for tools with single-dash long options like find or dd. */
export function hasWord(inv: Invocation, words: readonly string[]): boolean {
  return inv.args.some(({ value }) => value !== undefined && words.some((w) => value === w || value.startsWith(`${w}=`)));
}

/** True when an argument could turn out to be an option although it is only known at run time (`$OPTS`, `"$(…)"`). */
export function hasDynamicOption(inv: Invocation): boolean {
  return optionArgs(inv).some((w) => w.value === undefined && (w.prefix === '' || w.prefix.startsWith('-')));
}

/** Arguments that are not options, skipping the values of options listed in `valued` (`-u unit` → skip `unit`). */
export function positionals(inv: Invocation, valued: readonly string[] = []): (string | undefined)[] {
  const result: (string | undefined)[] = [];
  let afterDashes = false;
  for (let i = 0; i < inv.args.length; i++) {
    const value = inv.args[i]?.value;
    if (afterDashes || value === undefined || !value.startsWith('-') || value === '-') {
      result.push(value);
      continue;
    }
    if (value === '--') afterDashes = true;
    else if (valued.includes(value)) i++;
  }
  return result;
}

/** The sub-command: the first positional argument (`systemctl --no-pager status x` → `status`). */
export function subcommand(inv: Invocation, valued: readonly string[] = []): string | undefined {
  return positionals(inv, valued)[0];
}

export const named = (...names: readonly string[]) => (inv: Invocation): boolean =>
  inv.name !== undefined && names.includes(inv.name);

export interface Option {
  /** `-X` or `--request`. */
  readonly name: string;
  readonly value: string | undefined;
}

/**
 * The options of a command, read the way getopt does: `valued` short letters take the rest of their cluster or the
 * next word (`-XPOST`, `-X POST`, `-qO-`), `valuedLong` names take `=value` or the next word.
 */
export function options(inv: Invocation, valued: string, valuedLong: readonly string[] = []): Option[] {
  const found: Option[] = [];
  const vals = inv.args.map((w) => w.value);
  for (let i = 0; i < vals.length; i++) {
    const word = vals[i];
    if (word === undefined || word === '-' || !word.startsWith('-')) continue;
    if (word === '--') break;
    if (word.startsWith('--')) {
      const eq = word.indexOf('=');
      if (eq !== -1) found.push({ name: word.slice(0, eq), value: word.slice(eq + 1) });
      else if (valuedLong.includes(word)) found.push({ name: word, value: vals[++i] });
      else found.push({ name: word, value: undefined });
      continue;
    }
    for (let j = 1; j < word.length; j++) {
      const letter = word.charAt(j);
      if (!valued.includes(letter)) {
        found.push({ name: `-${letter}`, value: undefined });
        continue;
      }
      found.push({ name: `-${letter}`, value: j + 1 < word.length ? word.slice(j + 1) : vals[++i] });
      break;
    }
  }
  return found;
}
