// Reads a sed command's scripts far enough to know whether they write files (w, W, s///w) or run commands (e, s///e):
// those are the commands that reach outside the text sed prints.
import type { Invocation } from './args.ts';
import { hasFlag, options } from './args.ts';

export interface SedEffects {
  readonly writes: boolean;
  readonly runs: boolean;
}

const SINKS = ['/dev/stdout', '/dev/stderr'];

// Commands without an argument, and the ones whose argument runs to the end of the line (text, labels, files).
const PLAIN = new Set('=dDgGhHlLnNpPxzFqQ'.split(''));
const TO_LINE_END = new Set('aicbtTrRvwWe:#'.split(''));

class Cursor {
  at = 0;
  constructor(readonly text: string) {}
  get char(): string {
    return this.text.charAt(this.at);
  }
  get done(): boolean {
    return this.at >= this.text.length;
  }
  skip(pattern: RegExp): void {
    while (!this.done && pattern.test(this.char)) this.at++;
  }
  /** Text up to (not including) the next newline, or to `;` as well when `semicolon` ends it (labels). */
  rest(semicolon: boolean): string {
    const start = this.at;
    while (!this.done && this.char !== '\n' && !(semicolon && this.char === ';')) {
      // a, i and c continue onto the next line after a backslash.
      if (this.char === '\\') this.at++;
      this.at++;
    }
    return this.text.slice(start, this.at).trim();
  }
  /** Skips a delimited part (`/re/`, `\%re%`); false when it never closes. */
  delimited(delimiter: string): boolean {
    while (!this.done && this.char !== delimiter) {
      if (this.char === '\\') this.at++;
      this.at++;
    }
    if (this.done) return false;
    this.at++;
    return true;
  }
}

function address(c: Cursor): boolean {
  if (/[0-9$]/.test(c.char)) {
    c.skip(/[0-9$~]/);
    return true;
  }
  if (c.char !== '/' && c.char !== '\\') return true;
  // `/re/` or `\%re%`, then the I and M modifiers.
  const delimiter = c.char === '/' ? '/' : c.text.charAt(c.at + 1);
  c.at += c.char === '/' ? 1 : 2;
  if (!c.delimited(delimiter)) return false;
  c.skip(/[IM]/);
  return true;
}

/** The effects of a sed script, or undefined when it does not read as sed (sed itself would then refuse it). */
export function sedEffects(script: string): SedEffects | undefined {
  const c = new Cursor(script);
  let writes = false;
  let runs = false;
  while (!c.done) {
    c.skip(/[\s;{}!]/);
    if (c.done) break;
    if (!address(c)) return undefined;
    c.skip(/\s/);
    if (c.char === ',') {
      c.at++;
      c.skip(/[\s+~]/);
      if (!address(c)) return undefined;
    }
    c.skip(/[\s!]/);
    const command = c.char;
    c.at++;
    if (command === '' || command === '{' || command === '}' || command === ';') continue;
    if (PLAIN.has(command)) {
      c.skip(/[0-9 ]/);
      continue;
    }
    if (TO_LINE_END.has(command)) {
      const argument = c.rest('btT:'.includes(command));
      if ((command === 'w' || command === 'W') && !SINKS.includes(argument)) writes = true;
      if (command === 'e') runs = true;
      continue;
    }
    if (command === 's' || command === 'y') {
      const delimiter = c.char;
      c.at++;
      if (delimiter === '' || delimiter === '\n' || delimiter === '\\') return undefined;
      if (!c.delimited(delimiter) || !c.delimited(delimiter)) return undefined;
      if (command === 'y') continue;
      const flags = /^[gpiImMe0-9]*/.exec(c.text.slice(c.at))?.[0] ?? '';
      c.at += flags.length;
      if (flags.includes('e')) runs = true;
      if (c.char === 'w') {
        c.at++;
        if (!SINKS.includes(c.rest(false))) writes = true;
      }
      continue;
    }
    return undefined;
  }
  return { writes, runs };
}

/** The scripts sed runs: every -e/--expression, or else its first operand (undefined when only known at run time). */
function sedScripts(inv: Invocation): { scripts: (string | undefined)[]; fromFile: boolean } {
  const opts = options(inv, 'efl', ['--expression', '--file', '--line-length']);
  const fromFile = opts.some((o) => o.name === '-f' || o.name === '--file');
  const given = opts.filter((o) => o.name === '-e' || o.name === '--expression').map((o) => o.value);
  if (given.length > 0 || fromFile) return { scripts: given, fromFile };
  return { scripts: operandScript(inv), fromFile };
}

/** The first operand as the script; a word only known at run time before it may be an option that is a script. */
function operandScript(inv: Invocation): (string | undefined)[] {
  const { args } = inv;
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (word === undefined) break;
    const value = word.value;
    if (value === undefined) return [undefined];
    if (value === '--') return args[i + 1] === undefined ? [] : [args[i + 1]?.value];
    if (!value.startsWith('-') || value === '-') return [value];
    if (value === '-l' || value === '--line-length') i++;
  }
  return [];
}

// --sandbox makes sed refuse e, w and r.
const sandboxed = (inv: Invocation): boolean => inv.args.some((w) => w.value === '--sandbox');

/** Why a sed command runs code the classifier cannot see, or undefined when it runs none. */
export function sedRunsCode(inv: Invocation): string | undefined {
  if (sandboxed(inv)) return undefined;
  const { scripts, fromFile } = sedScripts(inv);
  if (fromFile) return 'sed runs the script in a file, which may run commands (e)';
  if (scripts.some((s) => s === undefined)) return 'the sed script is only known at run time and may run commands (e)';
  if (scripts.some((s) => s !== undefined && sedEffects(s)?.runs === true)) return 'the sed script runs commands (e)';
  return undefined;
}

/** True when sed edits in place or its script writes files (or does not read as sed). */
export function sedWrites(inv: Invocation): boolean {
  if (hasFlag(inv, 'i', ['--in-place'])) return true;
  if (sandboxed(inv)) return false;
  return sedScripts(inv).scripts.some((s) => s === undefined || (sedEffects(s)?.writes ?? true));
}
