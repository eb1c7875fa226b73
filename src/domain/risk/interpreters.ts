// Interpreters of languages other than the shell: the classifier reads only shell, so whatever program they are given
// (inline, a file, their input) is code it cannot see. Asking for the version or help is the one thing known to run none.
import type { Invocation } from './args.ts';

interface Interpreter {
  /** Short options whose value is an inline program (`c` for `python3 -c`), and long ones (`--eval`). */
  readonly inline: string;
  readonly inlineLong?: readonly string[];
  /** Short options taking the next word as a value that is not a program (`-W arg`, `-r module`). */
  readonly valued?: string;
  /** Options that only print and exit. */
  readonly info: readonly string[];
  /** An option that runs an installed module by name (`python3 -m venv`): like running an installed program. */
  readonly module?: string;
}

const VERSION = ['--version', '-v', '-V', '--help', '-h'];

const PYTHON: Interpreter = { inline: 'c', valued: 'WXQ', info: ['--version', '-V', '-VV', '--help', '-h', '-?'], module: 'm' };
const PERL: Interpreter = { inline: 'eE', info: ['--version', '-v', '-V', '--help', '-h'] };
const RUBY: Interpreter = { inline: 'e', valued: 'Ir', info: ['--version', '-v', '--help', '-h'] };
const NODE: Interpreter = { inline: 'ep', inlineLong: ['--eval', '--print'], valued: 'r', info: ['--version', '-v', '--help', '-h'] };
const PHP: Interpreter = { inline: 'rBRE', valued: 'cdz', info: ['--version', '-v', '--help', '-h', '-m', '-i', '--ini'] };
const LUA: Interpreter = { inline: 'e', valued: 'l', info: ['-v'] };
const OTHER: Interpreter = { inline: 'ce', inlineLong: ['--eval', '--command', '-Command', '-EncodedCommand'], info: VERSION };

const BY_NAME: ReadonlyMap<string, Interpreter> = new Map<string, Interpreter>([
  ['ruby', RUBY], ['irb', RUBY], ['node', NODE], ['nodejs', NODE], ['luajit', LUA],
  ['tclsh', OTHER], ['wish', OTHER], ['expect', OTHER], ['Rscript', OTHER], ['pwsh', OTHER], ['powershell', OTHER],
  ['julia', OTHER], ['guile', OTHER], ['osascript', OTHER], ['fish', OTHER], ['csh', OTHER], ['tcsh', OTHER],
  ['mongo', OTHER], ['mongosh', OTHER], ['groovy', OTHER], ['scala', OTHER], ['elixir', OTHER], ['escript', OTHER],
]);

function interpreter(name: string | undefined): Interpreter | undefined {
  if (name === undefined) return undefined;
  if (/^(python|pypy)[0-9.]*$/.test(name)) return PYTHON;
  if (/^perl[0-9.]*$/.test(name)) return PERL;
  if (/^php[0-9.]*$/.test(name)) return PHP;
  if (/^lua[0-9.]*$/.test(name)) return LUA;
  return BY_NAME.get(name);
}

/** True for an interpreter asked only for its version or help. */
export function onlyAsksVersion(inv: Invocation): boolean {
  const spec = interpreter(inv.name);
  return spec !== undefined && inv.args.length > 0 && inv.args.every((w) => w.value !== undefined && spec.info.includes(w.value));
}

type Found = { readonly kind: 'inline' } | { readonly kind: 'module' } | { readonly kind: 'file'; readonly text: string } | { readonly kind: 'input' };

/** Reads the options up to the program: an inline one, a module, a script file, or none (the input). */
function program(inv: Invocation, spec: Interpreter): Found {
  const { args } = inv;
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    const value = word?.value;
    if (word === undefined) break;
    if (value === undefined) return word.prefix.startsWith('-') ? { kind: 'inline' } : { kind: 'file', text: word.text };
    if (value === '-') return { kind: 'input' };
    if (value === '--') {
      const next = args[i + 1];
      return next === undefined ? { kind: 'input' } : { kind: 'file', text: next.text };
    }
    if (!value.startsWith('-')) return { kind: 'file', text: word.text };
    if ((spec.inlineLong ?? []).some((l) => value === l || value.startsWith(`${l}=`))) return { kind: 'inline' };
    if (value.startsWith('--')) continue;
    for (const letter of value.slice(1)) {
      if (spec.inline.includes(letter)) return { kind: 'inline' };
      if (spec.module?.includes(letter) === true) return { kind: 'module' };
      if (spec.valued?.includes(letter) === true) {
        if (value.endsWith(letter)) i++;
        break;
      }
    }
  }
  return { kind: 'input' };
}

/** Why an interpreter runs code the classifier cannot see, or undefined when it is no interpreter or runs none. */
export function interpreterProgram(inv: Invocation): string | undefined {
  const spec = interpreter(inv.name);
  if (spec === undefined || onlyAsksVersion(inv)) return undefined;
  const name = inv.name ?? '';
  const found = program(inv, spec);
  switch (found.kind) {
    case 'inline':
      return `${name} runs an inline program, which is not shell and is not read`;
    case 'module':
      return undefined;
    case 'file':
      return `${name} runs the program in ${found.text}`;
    case 'input':
      return `${name} runs a program read from its input (a pipe, a here-document or stdin)`;
    default: {
      const never: never = found;
      return never;
    }
  }
}
