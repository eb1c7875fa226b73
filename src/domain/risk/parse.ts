// Wraps the mvdan-sh parser: shell source → the simple commands it runs, each with its argv words and redirections.
// Compound commands (lists, pipelines, subshells, blocks, if/while/for/case, functions) and command or process
// substitutions are flattened in source order: the verdict is the most severe of the parts, so their order and
// grouping never change it.
import sh from 'mvdan-sh';
import type { Assign, CallExpr, DblQuoted, DeclClause, File, Lit, Node, Redirect as ShRedirect, SglQuoted, Stmt, Word as ShWord } from 'mvdan-sh';
import { quoteValue } from './quote.ts';

const { syntax } = sh;

/** One shell word. `value` is its text after quote removal, or undefined when it is only known at run time. */
export interface Word {
  readonly value: string | undefined;
  /** The literal text the word starts with: a word starting with a known non-dash prefix cannot be an option. */
  readonly prefix: string;
  /** How the word prints in a normalised command. */
  readonly text: string;
}

export type RedirectOp = '>' | '>>' | '<' | '<>' | '<&' | '>&' | '>|' | '<<' | '<<-' | '<<<' | '&>' | '&>>';

export interface Redirect {
  readonly op: RedirectOp;
  /** The file descriptor written before the operator (`2` in `2>&1`), if any. */
  readonly fd: string | undefined;
  readonly target: Word;
  /** The body of a here-document. */
  readonly heredoc: Word | undefined;
}

export interface SimpleCommand {
  /** Variable assignments before the command (`X=1 cmd`) or on their own (`X=1`). */
  readonly assigns: readonly Word[];
  readonly argv: readonly Word[];
  readonly redirects: readonly Redirect[];
  /** True for the redirections of a compound command (`{ a; b; } > f`): its output comes from the commands inside. */
  readonly compound: boolean;
}

/** A construct the shell that runs the command may read differently from the classifier. */
export type Construct = 'arithmetic' | 'arithmetic-names' | 'function' | 'comment-continuation' | 'ansi-quoting' | 'bare-lookup-assignment' | 'brace-expansion';

export interface Hazard {
  readonly construct: Construct;
  readonly text: string;
}

export type ParseResult =
  | { readonly ok: true; readonly commands: readonly SimpleCommand[]; readonly hazards: readonly Hazard[] }
  | { readonly ok: false; readonly error: string; readonly tooComplex?: true };

/**
 * How deeply brackets and compound keywords may nest. The parser and its walk recurse once per level and overflow
 * the stack far below what 8 KiB can nest, so the text is measured before parsing; quoted brackets count too, which
 * only refuses more.
 */
export const MAX_NESTING = 64;

const OPENERS = new Set(['(', '{', 'if', 'while', 'until', 'for', 'case', 'select', '`']);
const CLOSERS = new Set([')', '}', 'fi', 'done', 'esac']);

/** The deepest nesting of brackets and compound keywords in the text, counted without parsing. */
export function nestingDepth(src: string): number {
  let depth = 0;
  let max = 0;
  for (const token of src.match(/[(){}`]|[A-Za-z_]+/g) ?? []) {
    if (OPENERS.has(token)) max = Math.max(max, ++depth);
    else if (CLOSERS.has(token)) depth = Math.max(0, depth - 1);
  }
  return max;
}

/** Syntax nodes below this depth are not followed: a pipeline or `&&` list nests one level per part. */
export const MAX_SYNTAX_DEPTH = 400;

// mvdan.cc/sh/v3 syntax.RedirOperator values, in declaration order.
const REDIRECT_OPS: Readonly<Record<number, RedirectOp>> = {
  54: '>', 55: '>>', 56: '<', 57: '<>', 58: '<&', 59: '>&', 60: '>|', 61: '<<', 62: '<<-', 63: '<<<', 64: '&>', 65: '&>>',
};

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Source text of a node: mvdan-sh offsets count UTF-8 bytes. */
export class Source {
  private readonly bytes: Uint8Array;
  constructor(readonly text: string) {
    this.bytes = encoder.encode(text);
  }
  slice(start: number, end: number): string {
    return decoder.decode(this.bytes.subarray(start, end));
  }
  of(node: Node): string {
    return this.slice(node.Pos().Offset(), node.End().Offset());
  }
  /** Converts a byte offset into a string index. */
  index(offset: number): number {
    return decoder.decode(this.bytes.subarray(0, offset)).length;
  }
}

const isStackOverflow = (error: unknown): boolean => error instanceof RangeError;

export function parseAst(src: string): { ok: true; file: File } | { ok: false; error: string; tooComplex?: true } {
  if (nestingDepth(src) > MAX_NESTING) return { ok: false, error: `nested more than ${MAX_NESTING} levels deep`, tooComplex: true };
  try {
    return { ok: true, file: syntax.NewParser(syntax.KeepComments(true)).Parse(src, 'cmd') };
  } catch (error: unknown) {
    if (isStackOverflow(error)) return { ok: false, error: 'too deeply nested to parse', tooComplex: true };
    return { ok: false, error: goErrorMessage(error) };
  }
}

function goErrorMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'Error' in error && typeof error.Error === 'function') {
    const message: unknown = (error.Error as () => unknown).call(error);
    if (typeof message === 'string') return message;
  }
  return error instanceof Error ? error.message : 'syntax error';
}

export const nodeType = (node: Node): string => syntax.NodeType(node);

// Backslash removal: outside quotes every backslash escapes the next character; inside double quotes only these.
function unescape(raw: string, inDoubleQuotes: boolean): string {
  return inDoubleQuotes ? raw.replace(/\\([$`"\\])/g, '$1') : raw.replace(/\\(.)/gs, '$1');
}

function partValue(part: Node, inDoubleQuotes: boolean): string | undefined {
  switch (nodeType(part)) {
    case 'Lit':
      return unescape((part as Lit).Value, inDoubleQuotes);
    case 'SglQuoted': {
      const quoted = part as SglQuoted;
      return quoted.Dollar ? undefined : quoted.Value;
    }
    case 'DblQuoted': {
      const quoted = part as DblQuoted;
      return quoted.Dollar ? undefined : partsValue(quoted.Parts, true);
    }
    default:
      return undefined;
  }
}

function partsValue(parts: readonly Node[], inDoubleQuotes: boolean): string | undefined {
  let value = '';
  for (const part of parts) {
    const v = partValue(part, inDoubleQuotes);
    if (v === undefined) return undefined;
    value += v;
  }
  return value;
}

function partsPrefix(parts: readonly Node[], inDoubleQuotes: boolean): string {
  let prefix = '';
  for (const part of parts) {
    const v = partValue(part, inDoubleQuotes);
    if (v !== undefined) {
      prefix += v;
      continue;
    }
    if (nodeType(part) === 'DblQuoted') prefix += partsPrefix((part as DblQuoted).Parts, true);
    break;
  }
  return prefix;
}

/** The value of a word when it is fully literal; `word.Lit()` is no use, it gives '' for quoted words. */
export function wordValue(word: ShWord): string | undefined {
  return partsValue(word.Parts, false);
}

/** True when the word is written bare (no quotes, no escapes), so its text may hold glob or tilde syntax. */
// `word.Parts` copies the parser's slice into a new array on every read (GopherJS): each word reads it once.
function isBareWord(parts: readonly Node[], source: Source): boolean {
  const [only] = parts;
  return parts.length === 1 && only !== undefined && nodeType(only) === 'Lit' && !source.of(only).includes('\\');
}

export function canonicalWordText(word: ShWord, source: Source, parts: readonly Node[] = word.Parts): string {
  const value = partsValue(parts, false);
  if (value === undefined || isBareWord(parts, source)) return source.of(word);
  return quoteValue(value);
}

function toWord(word: ShWord, source: Source, parts: readonly Node[] = word.Parts): Word {
  const value = partsValue(parts, false);
  const prefix = value ?? partsPrefix(parts, false);
  const text = value === undefined || isBareWord(parts, source) ? source.of(word) : quoteValue(value);
  return { value, prefix, text };
}

export function literalWord(value: string): Word {
  return { value, prefix: value, text: quoteValue(value) };
}

function toRedirect(redirect: ShRedirect, source: Source): Redirect | undefined {
  const op = REDIRECT_OPS[redirect.Op];
  if (op === undefined || !redirect.Word) return undefined;
  return {
    op,
    fd: redirect.N?.Value,
    target: toWord(redirect.Word, source),
    heredoc: redirect.Hdoc ? heredocWord(redirect.Hdoc, redirect.Word, source, op === '<<-') : undefined,
  };
}

/**
 * A here-document's body as the shell hands it on. With the delimiter quoted in any way (`'EOF'`, `"EOF"`, `E\OF`)
 * it is the text as written, backslashes included; otherwise `\$`, `\``, `\\` lose the backslash, a backslash
 * before a newline joins the lines, and every other backslash stays (`\"` is two characters, unlike in a word).
 * Reading it with a word's backslash removal would hide code: `sh <<EOF` with `echo \"; rm -rf /x; #"` runs rm.
 */
function heredocWord(body: ShWord, delimiter: ShWord, source: Source, stripTabs: boolean): Word {
  const parts = body.Parts;
  const quoted = delimiter.Parts.some((p) => nodeType(p) !== 'Lit') || source.of(delimiter).includes('\\');
  let value: string | undefined = '';
  for (const [i, part] of parts.entries()) {
    if (nodeType(part) !== 'Lit') {
      value = undefined;
      break;
    }
    let raw = (part as Lit).Value;
    // `<<-` drops the tabs that start each line (the parser keeps them); a part after the first starts after a
    // backslash-newline, where the shell keeps them.
    if (stripTabs) raw = (i === 0 ? raw.replace(/^\t+/, '') : raw).replace(/\n\t+/g, '\n');
    value += quoted ? raw : raw.replace(/\\([$`\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
  }
  return value === undefined ? { value, prefix: '', text: source.of(body) } : { value, prefix: value, text: quoteValue(value) };
}

function assignWord(assign: Assign, source: Source): Word {
  // An option of a declaration (`declare -n`) is an assignment with a value and no name.
  if (!assign.Name && assign.Value) return toWord(assign.Value, source);
  const name = assign.Name?.Value ?? '';
  if (assign.Naked || !assign.Value) return literalWord(name);
  const value = wordValue(assign.Value);
  return value === undefined
    ? { value: undefined, prefix: `${name}=`, text: `${name}=${source.of(assign.Value)}` }
    : { value: `${name}=${value}`, prefix: `${name}=${value}`, text: `${name}=${quoteValue(value)}` };
}

/** A call's words, and whether bash would brace-expand one where it changes the program or starts an option. */
function callWords(call: CallExpr, source: Source): { argv: Word[]; braces: boolean } {
  let braces = false;
  const argv = call.Args.map((word, i) => {
    const parts = word.Parts;
    const skeleton = unquotedSkeleton(parts);
    if (BRACE_EXPANSION.test(skeleton) && (i === 0 || skeleton.startsWith('{'))) braces = true;
    return toWord(word, source, parts);
  });
  return { argv, braces };
}

// Commands that are not calls but still run as a step of their own; the rest are containers the walk descends into.
function argvOf(command: Node | null, source: Source): readonly Word[] | undefined {
  if (!command) return [];
  switch (nodeType(command)) {
    case 'CallExpr':
      return callWords(command as CallExpr, source).argv;
    case 'DeclClause': {
      const decl = command as DeclClause;
      return [literalWord(decl.Variant.Value), ...decl.Args.map((assign) => assignWord(assign, source))];
    }
    case 'TestClause':
      return [literalWord('[[')];
    case 'ArithmCmd':
      return [literalWord('((')];
    case 'LetClause':
      return [literalWord('let')];
    default:
      return undefined;
  }
}

/** Parses shell source into the simple commands it would run; a syntax error is returned, never thrown. */
export function parseShell(src: string): ParseResult {
  const parsed = parseAst(src);
  if (!parsed.ok) return parsed;
  const source = new Source(src);
  const commands: SimpleCommand[] = [];
  const hazards: Hazard[] = [];
  let depth = 0;
  let tooDeep = false;
  const visit = (node: Node | null): boolean => {
    if (node === null) {
      depth--;
      return true;
    }
    if (++depth > MAX_SYNTAX_DEPTH) {
      tooDeep = true;
      depth--;
      return false;
    }
    const type = nodeType(node);
    const construct = hazardOf(type, node, source);
    if (construct !== undefined) hazards.push({ construct, text: source.of(node).trim() });
    if (type !== 'Stmt') return true;
    const stmt = node as Stmt;
    const redirects = stmt.Redirs.flatMap((r) => toRedirect(r, source) ?? []);
    const cmd = stmt.Cmd;
    const call = cmd !== null && nodeType(cmd) === 'CallExpr' ? (cmd as CallExpr) : undefined;
    let argv: readonly Word[] | undefined;
    if (call === undefined) argv = argvOf(cmd, source);
    else {
      const words = callWords(call, source);
      argv = words.argv;
      if (words.braces) hazards.push({ construct: 'brace-expansion', text: source.of(call).trim() });
    }
    const assigns = call === undefined ? [] : call.Assigns.map((a) => assignWord(a, source));
    // A compound command with redirections (`{ a; b; } > f`) still writes where they point.
    if (argv !== undefined) commands.push({ assigns, argv, redirects, compound: false });
    else if (redirects.length > 0) commands.push({ assigns, argv: [], redirects, compound: true });
    return true;
  };
  try {
    syntax.Walk(parsed.file, visit);
  } catch (error: unknown) {
    if (!isStackOverflow(error)) throw error;
    tooDeep = true;
  }
  if (tooDeep) return { ok: false, error: `its syntax nests more than ${MAX_SYNTAX_DEPTH} levels deep`, tooComplex: true };
  return { ok: true, commands, hazards };
}

/** A word's unquoted text, with every quoted or expanded part (and escaped character) as `x`. */
const unquotedSkeleton = (parts: readonly Node[]): string => parts.map((p) => (nodeType(p) === 'Lit' ? (p as Lit).Value.replace(/\\[\s\S]/g, 'x') : 'x')).join('');
const BRACE_EXPANSION = /\{[^{}]*(,|\.\.)[^{}]*\}/;

// Bash (behind ssh, or `bash -c`) expands `{a,b}` into several words; dash passes it as it is. Where that can change
// the program run (the first word) or start an option (nothing literal before the brace), the classifier cannot know
// which words the program gets (callWords). `cp f{,.bak}` and `/srv/{a,b}` keep their literal start: left alone.

/** The construct a node is, when the running shell may read it differently from the classifier. */
const NAME_OR_EXPANSION = /[A-Za-z_$`]/;
// A parameter's array index (`${a[i]}`) or substring offsets (`${x:i:n}`, not `${x:-d}`, `:=`, `:?`, `:+`).
const PARAMETER_ARITHMETIC = /^\$\{[#!]?[A-Za-z_][A-Za-z0-9_]*(?:\[([^\]]*)\]|:(?![-=?+])([^}]*))/;

/**
 * Bash evaluates a variable's value as an arithmetic expression wherever it does arithmetic (`$((x))`, `${a[x]}`,
 * `${s:x}`, `[[ x -eq 1 ]]`, `declare -i`), and a value such as `a[$(cmd)]` runs cmd there; dash does not. The value
 * is known only at run time, so any name or expansion in such a place is a hazard.
 */
function evaluatesNames(type: string, text: string): boolean {
  switch (type) {
    case 'ArithmExp':
      return NAME_OR_EXPANSION.test(text.replace(/^\$\(\(|\)\)$/g, '').replace(/\b0[xX][0-9a-fA-F]+\b/g, '0'));
    case 'ParamExp': {
      const match = PARAMETER_ARITHMETIC.exec(text);
      const inside = match?.[1] ?? match?.[2];
      return inside !== undefined && inside !== '@' && inside !== '*' && NAME_OR_EXPANSION.test(inside);
    }
    case 'TestClause':
      return /\s-(?:eq|ne|lt|le|gt|ge)\s/.test(text) && NAME_OR_EXPANSION.test(text.replace(/^\[\[|\]\]$/g, '').replace(/\s-(?:eq|ne|lt|le|gt|ge)\s/g, ' '));
    case 'DeclClause':
      return /^(?:declare|typeset|local|export|readonly)\s(?:.*\s)?-[A-Za-z]*i/.test(text);
    default:
      return false;
  }
}

function hazardOf(type: string, node: Node, source: Source): Construct | undefined {
  switch (type) {
    case 'ArithmCmd':
    case 'LetClause':
      return 'arithmetic';
    case 'ArithmExp':
    case 'ParamExp':
    case 'TestClause':
    case 'DeclClause':
      return evaluatesNames(type, source.of(node)) ? 'arithmetic-names' : undefined;
    case 'FuncDecl':
      return 'function';
    case 'SglQuoted':
    case 'DblQuoted':
      return (node as SglQuoted | DblQuoted).Dollar ? 'ansi-quoting' : undefined;
    case 'Comment': {
      // The parser joins the next line to a comment ending in a backslash; every shell ends the comment at the newline.
      const end = node.End().Offset();
      return /\\$/.test(source.of(node).replace(/\r?\n$/, '')) && source.slice(end - 1, end + 1).includes('\n') ? 'comment-continuation' : undefined;
    }
    default:
      return undefined;
  }
}
