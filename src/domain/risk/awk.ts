// What an awk command runs: its program (inline, from files, or only known at run time) and whether that program
// runs commands (system(), pipes) or writes files (print > file, in-place editing).
import type { Invocation } from './args.ts';

export const AWKS = ['awk', 'gawk', 'mawk', 'nawk'];

interface AwkProgram {
  /** Inline program texts (the operand, or gawk's -e/--source); undefined when only known at run time. */
  readonly inline: readonly (string | undefined)[];
  /** Program files and extension libraries it loads (-f, -E, -i, -l), by text. */
  readonly files: readonly string[];
  /** gawk -i inplace: it rewrites its input files. */
  readonly inPlace: boolean;
  /** --version or --help: it prints and exits without a program. */
  readonly info: boolean;
}

const FILE_OPTIONS = ['-f', '--file', '-E', '--exec', '-i', '--include', '-l', '--load'];
const VALUE_OPTIONS = ['-v', '--assign', '-F', '--field-separator'];
const SOURCE_OPTIONS = ['-e', '--source'];
const INFO_OPTIONS = ['--version', '-V', '--help', '-h', '--usage'];

function readProgram(inv: Invocation): AwkProgram {
  const inline: (string | undefined)[] = [];
  const files: string[] = [];
  let inPlace = false;
  let info = false;
  const { args } = inv;
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (word === undefined) break;
    const value = word.value;
    // A word only known at run time that starts like an option is one (`-F"$SEP"`); otherwise it is the program.
    if (value === undefined && word.prefix.startsWith('-')) {
      if (/^-[fEil]/.test(word.prefix)) files.push(word.text);
      continue;
    }
    if (value === undefined || value === '-' || !value.startsWith('-')) {
      if (inline.length === 0 && files.length === 0) inline.push(value);
      break;
    }
    if (value === '--') {
      if (inline.length === 0 && files.length === 0) inline.push(args[i + 1]?.value);
      break;
    }
    if (INFO_OPTIONS.includes(value)) info = true;
    const [name, attached] = splitOption(value);
    const next = (): string | undefined => attached ?? args[++i]?.value;
    if (FILE_OPTIONS.includes(name)) {
      const file = next();
      if ((name === '-i' || name === '--include') && file === 'inplace') inPlace = true;
      else files.push(file ?? '(a file only known at run time)');
    } else if (SOURCE_OPTIONS.includes(name)) inline.push(next());
    else if (VALUE_OPTIONS.includes(name)) next();
  }
  return { inline, files, inPlace, info };
}

/** `-fprog` → ['-f', 'prog'], `--file=prog` → ['--file', 'prog'], `-F:` → ['-F', ':']. */
function splitOption(value: string): [string, string | undefined] {
  if (value.startsWith('--')) {
    const eq = value.indexOf('=');
    return eq === -1 ? [value, undefined] : [value.slice(0, eq), value.slice(eq + 1)];
  }
  return value.length > 2 ? [value.slice(0, 2), value.slice(2)] : [value, undefined];
}

// system(), `cmd | getline`, `print | "cmd"` and gawk's `|&` coprocesses run commands.
const RUNS = /\bsystem\s*\(|\|\s*getline\b|\|&|\bprintf?\b[^;}]*\|/;
// `print > "file"` and `print >> "file"` write files.
const WRITES = /\bprintf?\b[^;}]*>/;

/** Why an awk command runs code the classifier cannot see, or undefined when it runs none. */
export function awkRunsCode(inv: Invocation): string | undefined {
  const program = readProgram(inv);
  if (program.files.length > 0) return `awk runs the program in ${program.files.join(', ')}`;
  if (program.inline.some((p) => p === undefined)) return 'the awk program is only known at run time';
  if (program.inline.some((p) => p !== undefined && RUNS.test(p))) return 'the awk program runs commands (system(), a pipe)';
  return undefined;
}

/** True when an awk command writes files: in-place editing, output redirected inside the program, or no program at all. */
export function awkWrites(inv: Invocation): boolean {
  const program = readProgram(inv);
  if (program.inPlace) return true;
  if (program.inline.length === 0 && program.files.length === 0) return !program.info;
  return program.inline.some((p) => p !== undefined && WRITES.test(p));
}
