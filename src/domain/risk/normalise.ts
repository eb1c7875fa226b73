// A canonical spelling of a command for retry-cap hashing: whitespace between words collapsed, every literal word
// quoted one way, so `chown  ':10000'   /mnt/x` and `chown :10000 /mnt/x` come out equal.
import sh from 'mvdan-sh';
import type { Word } from 'mvdan-sh';
import { Source, canonicalWordText, nodeType, parseAst, wordValue } from './parse.ts';

const { syntax } = sh;

const collapse = (text: string): string => text.trim().replace(/\s+/g, ' ');

// Text of these nodes is kept verbatim: quoting or expansions whose spacing matters.
const VERBATIM = new Set(['SglQuoted', 'DblQuoted', 'ParamExp', 'ArithmExp', 'Lit']);

export function normaliseCommand(command: string): string {
  const parsed = parseAst(command);
  if (!parsed.ok) return collapse(command);
  const source = new Source(command);
  const replacements: { start: number; end: number; text: string }[] = [];
  const verbatim: { start: number; end: number }[] = [];
  const { file } = parsed;
  try {
    walkNodes();
  } catch (error: unknown) {
    // A tree too deep for the walk: the collapsed text still names the command for retry hashing.
    if (error instanceof RangeError) return collapse(command);
    throw error;
  }
  function walkNodes(): void {
  syntax.Walk(file, (node) => {
    if (node === null) return true;
    const start = source.index(node.Pos().Offset());
    const end = source.index(node.End().Offset());
    const type = nodeType(node);
    if (type === 'Word' && wordValue(node as Word) !== undefined) {
      replacements.push({ start, end, text: canonicalWordText(node as Word, source) });
      return false;
    }
    if (VERBATIM.has(type) || (type === 'Redirect' && command.slice(start, end).includes('<<'))) verbatim.push({ start, end });
    return true;
  });
  }
  replacements.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  const gap = (end: number): void => {
    // Outside words, runs of blanks become one space; inside a verbatim span (a here-document, a quoted part) nothing changes.
    for (let i = at; i < end; i++) {
      const char = command.charAt(i);
      const kept = verbatim.some((v) => i >= v.start && i < v.end);
      if (kept || !/\s/.test(char)) out += char;
      else if (!/\s$/.test(out)) out += char === '\n' ? '\n' : ' ';
    }
    at = end;
  };
  for (const r of replacements) {
    if (r.start < at) continue;
    gap(r.start);
    out += r.text;
    at = r.end;
  }
  gap(command.length);
  return out.trim().replace(/[ \t]*\n[ \t\n]*/g, '\n');
}
