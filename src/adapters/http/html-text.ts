// Readable text of a page in one pass: htmlparser2's tokenizer (a linear state machine that also knows raw-text
// elements and entities) feeds a converter that keeps no tree and no stack of open elements — only which
// element's content is being skipped and how deep — so nesting, unclosed tags or huge attributes cost no more
// than their bytes. htmlparser2's Parser, and html-to-text built on it, are not used: their open-element stack
// costs time in proportion to its depth on every tag. Work is cut in slices that yield to the event loop, and
// stops at a bound on the text it produced and on the time it took.
import { Tokenizer } from 'htmlparser2';

/** Content never shown: code, styles, embedded documents and pictures. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'noembed', 'noframes']);
/** Elements that sit inside a line; any other tag separates words, and these start a line of their own. */
const INLINE = new Set(['a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'font', 'i', 'ins', 'kbd', 'mark', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'tt', 'u', 'var', 'wbr']);
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'caption', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure',
  'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hgroup', 'hr', 'legend', 'li', 'main', 'nav', 'ol', 'option', 'p', 'pre',
  'section', 'summary', 'table', 'tbody', 'tfoot', 'thead', 'title', 'tr', 'ul',
]);
const SLICE = 64 * 1024;

export interface TextLimits {
  /** Characters of text after which the conversion stops. */
  readonly maxChars: number;
  /** Milliseconds after which it stops. */
  readonly maxMs: number;
}

/** The text, and why it ended early: null (it did not), `size` (maxChars reached) or `time` (maxMs passed). */
export interface Converted {
  readonly text: string;
  readonly stopped: null | 'size' | 'time';
}

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 11 || c === 0xa0;

/** Collects words with single spaces and single line breaks between them, up to a bound. */
class Output {
  private readonly parts: string[] = [];
  private length = 0;
  /** 0: nothing pending, 1: a space, 2: a line break. */
  private gap = 0;
  private lastWasBreak = true;
  constructor(private readonly max: number) {}

  get full(): boolean {
    return this.length >= this.max;
  }

  space(): void {
    this.gap = Math.max(this.gap, 1);
  }

  lineBreak(): void {
    this.gap = 2;
  }

  /** Text whose whitespace runs become one space. */
  words(text: string): void {
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      if (!isSpace(text.charCodeAt(i))) continue;
      if (i > start) this.raw(text.slice(start, i));
      this.space();
      start = i + 1;
    }
    if (start < text.length) this.raw(start === 0 ? text : text.slice(start));
  }

  /** Text kept as written (inside pre). */
  raw(text: string): void {
    if (this.full || text === '') return;
    if (this.length > 0 && this.gap === 2) this.push('\n');
    else if (this.length > 0 && this.gap === 1 && !this.lastWasBreak) this.push(' ');
    this.gap = 0;
    this.push(text.length > this.max - this.length ? text.slice(0, this.max - this.length) : text);
  }

  private push(s: string): void {
    this.parts.push(s);
    this.length += s.length;
    this.lastWasBreak = s.charCodeAt(s.length - 1) === 10;
  }

  text(): string {
    return this.parts.join('').trimEnd();
  }
}

/** Readable text of an HTML (or XML) document. */
export async function htmlToText(html: string, limits: TextLimits): Promise<Converted> {
  const out = new Output(limits.maxChars);
  let skipping: string | null = null;
  let skipDepth = 0;
  let preDepth = 0;
  let tag = '';
  const text = (s: string) => {
    if (skipping !== null) return;
    if (preDepth > 0) out.raw(s);
    else out.words(s);
  };
  const boundary = (name: string, opening: boolean) => {
    if (name === 'pre') preDepth = Math.max(0, preDepth + (opening ? 1 : -1));
    if (BLOCK.has(name)) out.lineBreak();
    else if (!INLINE.has(name)) out.space();
  };
  const closeSkipped = (name: string) => {
    if (name === skipping && --skipDepth === 0) skipping = null;
  };
  const tokenizer = new Tokenizer(
    { decodeEntities: true },
    {
      onopentagname(start, end) {
        tag = html.slice(start, end).toLowerCase();
        if (skipping !== null) {
          if (tag === skipping) skipDepth++;
        } else if (SKIPPED.has(tag)) {
          skipping = tag;
          skipDepth = 1;
        } else boundary(tag, true);
      },
      // The tokenizer ends a self-closed element's raw text at once (`<script/>`, `<svg/>`): so does the skip.
      onselfclosingtag() {
        if (skipping !== null) closeSkipped(tag);
        else if (tag === 'pre') boundary(tag, false);
      },
      onclosetag(start, end) {
        const name = html.slice(start, end).toLowerCase();
        if (skipping !== null) closeSkipped(name);
        else boundary(name, false);
      },
      ontext(start, end) {
        text(html.slice(start, end));
      },
      ontextentity(codepoint) {
        text(codepoint <= 0x10ffff ? String.fromCodePoint(codepoint) : '\uFFFD');
      },
      oncdata(start, end, endOffset) {
        text(html.slice(start, end - endOffset));
      },
      onattribdata() {},
      onattribentity() {},
      onattribend() {},
      onattribname() {},
      oncomment() {},
      ondeclaration() {},
      onend() {},
      onopentagend() {},
      onprocessinginstruction() {},
    },
  );
  const started = performance.now();
  for (let at = 0; at < html.length; at += SLICE) {
    if (out.full) return { text: out.text(), stopped: 'size' };
    if (performance.now() - started > limits.maxMs) return { text: out.text(), stopped: 'time' };
    tokenizer.write(html.slice(at, at + SLICE));
    // Another request's turn between slices: a long page delays others by one slice's work at most.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  tokenizer.end();
  return { text: out.text(), stopped: out.full ? 'size' : null };
}

/** Plain text with runs of spaces and blank lines tidied, bounded like a page's. */
export function plainText(body: string, limits: Pick<TextLimits, 'maxChars'>): Converted {
  const kept = body.length > limits.maxChars ? body.slice(0, limits.maxChars) : body;
  return { text: kept.replace(/[ \t]+/g, ' ').replace(/\n{3,}/g, '\n\n').trim(), stopped: kept === body ? null : 'size' };
}
