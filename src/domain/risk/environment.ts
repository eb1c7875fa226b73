// Environment assignments before a command (`X=1 cmd`, `env X=1 cmd`, `sudo X=1 cmd`): the program reads them, so
// they are part of what it does. A few only change how output looks; some make the program load or run other code;
// every other one changes its behaviour in a way no rule models.
import type { Invocation } from './args.ts';
import type { Word } from './parse.ts';

const NAME = /^([A-Za-z_][A-Za-z0-9_]*)=/;

/** Variables that only change language, time zone or terminal layout, with the values that keep them so. */
const SAFE: readonly (readonly [name: RegExp, value: RegExp])[] = [
  [/^(LANG|LANGUAGE|LC_[A-Z]+)$/, /^[A-Za-z0-9_.@:-]*$/],
  [/^TZ$/, /^[A-Za-z0-9_+/-]*$/],
  [/^(TERM|COLUMNS|LINES|NO_COLOR)$/, /^[A-Za-z0-9_.-]*$/],
  // Only the system's own program directories: the names then run the programs the classifier judged by name.
  [/^PATH$/, /^(\/usr\/local\/s?bin|\/usr\/s?bin|\/s?bin)(:(\/usr\/local\/s?bin|\/usr\/s?bin|\/s?bin))*$/],
  // A pager of `cat` or none prints straight to the output; any other pager is a program (below).
  [/^(PAGER|SYSTEMD_PAGER|GIT_PAGER|MANPAGER)$/, /^(cat|)$/],
];

/** Variables that make a program load or run code named by their value, with what each does. */
const CODE: readonly (readonly [name: RegExp, does: string])[] = [
  [/^LD_/, 'makes the dynamic loader load libraries or audit modules it names into every program started'],
  [/^PATH$/, 'changes where every command name is looked up, so a name may run another program'],
  [/^GIT_/, 'sets git configuration, ssh command, exec path or pager, several of which run a program'],
  [/^(PYTHON|PERL|RUBY|NODE_|JAVA_TOOL_OPTIONS$|_JAVA_OPTIONS$|JDK_JAVA_OPTIONS$)/, "makes an interpreter load modules or run options from it"],
  [/^(BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|IFS)$/, 'makes a shell run a file or change how it reads every command'],
  [/^(PAGER|SYSTEMD_PAGER|MANPAGER|EDITOR|VISUAL|SUDO_EDITOR|BROWSER|LESSOPEN|LESSCLOSE|SSH_ASKPASS|SUDO_ASKPASS|DISPLAY_ASKPASS)$/, 'names a program the command runs (a pager, an editor, a password prompt)'],
  [/^(RSYNC_RSH|RSYNC_CONNECT_PROG|CVS_RSH|TAR_OPTIONS|GZIP|XZ_OPT|ZSTD_CLEVEL|PSQLRC|MYSQL_HOME|GCONV_PATH|LOCPATH|NLSPATH|MALLOC_.*|SYSTEMD_.*|DPKG_.*|APT_CONFIG)$/, 'names a program, options or a file of commands the tool reads and may run'],
];

/** The variable name of an assignment word (`LD_PRELOAD=/x.so` → LD_PRELOAD). */
export const assignedName = (word: Word): string | undefined => NAME.exec(word.prefix)?.[1];

function safe(word: Word): boolean {
  const name = assignedName(word);
  if (name === undefined || word.value === undefined) return false;
  const value = word.value.slice(name.length + 1);
  return SAFE.some(([n, v]) => n.test(name) && v.test(value));
}

/** What the first assignment that loads or runs code does, or undefined when none does. */
export function assignmentRunsCode(words: readonly Word[]): string | undefined {
  for (const word of words) {
    const name = assignedName(word);
    if (name === undefined || safe(word)) continue;
    const code = CODE.find(([n]) => n.test(name));
    if (code !== undefined) return `${name} ${code[1]}`;
  }
  return undefined;
}

/** The first assignment not on the safe list, or undefined. */
export function unsafeAssignment(words: readonly Word[]): string | undefined {
  return words.find((w) => assignedName(w) !== undefined && !safe(w))?.text;
}

// sudo's options that take a value in the next word (or the rest of their cluster).
const SUDO_VALUED = 'CDghpRrtTUu';
const SUDO_VALUED_LONG = ['--user', '--group', '--chdir', '--host', '--prompt', '--role', '--type', '--close-from', '--command-timeout', '--other-user'];
const ENV_VALUED = 'uCS';
const ENV_VALUED_LONG = ['--unset', '--chdir', '--split-string'];

/** The assignments `env`, `sudo` or `doas` set for the command they run, after their own options. */
export function wrapperAssignments(inv: Invocation): readonly Word[] {
  const spec = inv.name === 'env' ? { short: ENV_VALUED, long: ENV_VALUED_LONG } : inv.name === 'sudo' || inv.name === 'doas' ? { short: SUDO_VALUED, long: SUDO_VALUED_LONG } : undefined;
  if (spec === undefined) return [];
  let i = 0;
  for (; i < inv.args.length; i++) {
    const value = inv.args[i]?.value;
    if (value === undefined || !value.startsWith('-') || value === '-') break;
    if (value === '--') {
      i++;
      break;
    }
    if (value.startsWith('--')) {
      if (!value.includes('=') && spec.long.includes(value)) i++;
      continue;
    }
    if (spec.short.includes(value.charAt(value.length - 1))) i++;
  }
  const found: Word[] = [];
  for (; i < inv.args.length; i++) {
    const word = inv.args[i];
    if (word === undefined || assignedName(word) === undefined) break;
    found.push(word);
  }
  return found;
}
