// A lexical reading of what a database client is given, in its own dialect: words, quoted names, strings, dollar
// quotes, numbers, punctuation, comments skipped, and the client's own commands (psql's `\d`, mysql's `\G`, sqlite3's
// `.tables`) as tokens of their own. Rules read statements from these tokens, never from the raw text, so a keyword
// inside a string or a comment is never mistaken for one, and one hidden between comments is never missed.

export type Dialect = 'postgres' | 'mysql' | 'sqlite' | 'clickhouse';

export type SqlToken =
  /** An unquoted word; `upper` is its keyword spelling. */
  | { readonly kind: 'word'; readonly text: string; readonly upper: string }
  /** A quoted name ("x", `x`, [x]): never a keyword, but a function when a `(` follows. */
  | { readonly kind: 'quoted'; readonly text: string; readonly upper: string }
  | { readonly kind: 'string'; readonly text: string }
  | { readonly kind: 'number'; readonly text: string }
  /** A psql variable (`:name`, `:'name'`): its text is only known when psql runs. */
  | { readonly kind: 'variable'; readonly text: string }
  | { readonly kind: 'punct'; readonly text: string }
  /** A client command: psql and mysql `\name args`, sqlite3 `.name args`. */
  | { readonly kind: 'client'; readonly name: string; readonly args: string; readonly text: string };

const WORD_START = /[A-Za-z_\u0080-\uffff]/;
const WORD_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/;

/** Where a quoted run ends, given its closing quote and whether a backslash escapes the next character. */
function quotedEnd(sql: string, from: number, close: string, backslash: boolean): number {
  let i = from;
  while (i < sql.length) {
    const c = sql.charAt(i);
    if (backslash && c === '\\') {
      i += 2;
      continue;
    }
    if (c === close) {
      // A doubled quote is the quote itself.
      if (sql.charAt(i + 1) === close && close !== ']') {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return sql.length;
}

function lineEnd(sql: string, from: number): number {
  const end = sql.indexOf('\n', from);
  return end === -1 ? sql.length : end;
}

/** The end of a block comment; PostgreSQL's nest. */
function blockCommentEnd(sql: string, from: number, nests: boolean): number {
  let depth = 1;
  let i = from;
  while (i < sql.length && depth > 0) {
    if (nests && sql.startsWith('/*', i)) {
      depth++;
      i += 2;
    } else if (sql.startsWith('*/', i)) {
      depth--;
      i += 2;
    } else i++;
  }
  return i;
}

/** Whether position i starts a line with nothing before it but blanks, and no statement is open. */
function atStatementLineStart(sql: string, i: number, tokens: readonly SqlToken[]): boolean {
  const before = sql.slice(sql.lastIndexOf('\n', i - 1) + 1, i);
  const last = tokens.at(-1);
  return before.trim() === '' && (last === undefined || (last.kind === 'punct' && last.text === ';') || last.kind === 'client');
}

/** A psql or mysql backslash command: psql's runs to the end of the line or a `\\`; mysql's is one letter. */
function backslashCommand(sql: string, i: number, dialect: Dialect): { token: SqlToken; end: number } {
  if (dialect !== 'postgres') {
    const name = sql.charAt(i + 1);
    const end = name === 'G' || name === 'g' ? i + 2 : lineEnd(sql, i);
    return { token: { kind: 'client', name, args: sql.slice(i + 2, end).trim(), text: sql.slice(i, end) }, end };
  }
  const match = /^\\([A-Za-z_]+[+Sx]*|[^\sA-Za-z_])/.exec(sql.slice(i));
  const name = match?.[1] ?? '';
  const argsStart = i + 1 + name.length;
  const lineStop = lineEnd(sql, argsStart);
  const sep = sql.indexOf('\\\\', argsStart);
  const end = sep !== -1 && sep < lineStop ? sep : lineStop;
  return { token: { kind: 'client', name, args: sql.slice(argsStart, end).trim(), text: sql.slice(i, end) }, end: sep === end ? end + 2 : end };
}

function dollarQuoteEnd(sql: string, i: number): number | undefined {
  const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i))?.[0];
  if (tag === undefined) return undefined;
  const close = sql.indexOf(tag, i + tag.length);
  return close === -1 ? sql.length : close + tag.length;
}

/** Tokens of `sql` as the client and server of `dialect` read them. */
export function tokenize(sql: string, dialect: Dialect): SqlToken[] {
  const tokens: SqlToken[] = [];
  const backslashEscapes = dialect === 'mysql' || dialect === 'clickhouse';
  let i = 0;
  while (i < sql.length) {
    const c = sql.charAt(i);
    const rest2 = sql.slice(i, i + 2);
    if (/\s/.test(c)) {
      i++;
    } else if (rest2 === '--' || (c === '#' && dialect === 'mysql')) {
      i = lineEnd(sql, i);
    } else if (rest2 === '/*') {
      // MySQL runs the text of /*! … */ and /*!50000 … */: read it as statements, not as a comment.
      if (sql.charAt(i + 2) === '!' && dialect === 'mysql') {
        i += 3;
        while (/\d/.test(sql.charAt(i))) i++;
      } else i = blockCommentEnd(sql, i + 2, dialect === 'postgres');
    } else if (rest2 === '*/') {
      i += 2;
    } else if (c === '\\' && dialect !== 'sqlite') {
      const { token, end } = backslashCommand(sql, i, dialect);
      tokens.push(token);
      i = end;
    } else if (c === '.' && dialect === 'sqlite' && atStatementLineStart(sql, i, tokens)) {
      const end = lineEnd(sql, i);
      const line = sql.slice(i + 1, end);
      const name = /^\S*/.exec(line)?.[0] ?? '';
      tokens.push({ kind: 'client', name, args: line.slice(name.length).trim(), text: sql.slice(i, end) });
      i = end;
    } else if (c === "'" || (c === '"' && (dialect === 'mysql'))) {
      // E'…' strings take backslash escapes in PostgreSQL; MySQL's and ClickHouse's always do.
      const escaped = backslashEscapes || (dialect === 'postgres' && /(^|[^A-Za-z0-9_$])[eE]$/.test(sql.slice(Math.max(0, i - 2), i)));
      const end = quotedEnd(sql, i + 1, c, escaped);
      tokens.push({ kind: 'string', text: sql.slice(i, end) });
      i = end;
    } else if (c === '"' || c === '`' || (c === '[' && dialect === 'sqlite')) {
      const close = c === '[' ? ']' : c;
      const end = quotedEnd(sql, i + 1, close, false);
      const name = sql.slice(i + 1, end - 1);
      tokens.push({ kind: 'quoted', text: name, upper: name.toUpperCase() });
      i = end;
    } else if (c === '$' && dialect === 'postgres' && dollarQuoteEnd(sql, i) !== undefined) {
      const end = dollarQuoteEnd(sql, i) ?? sql.length;
      tokens.push({ kind: 'string', text: sql.slice(i, end) });
      i = end;
    } else if (c === ':' && dialect === 'postgres' && /^:(['"]?)[A-Za-z_]/.test(sql.slice(i)) && sql.charAt(i - 1) !== ':') {
      const match = /^:(['"]?)[A-Za-z_][A-Za-z0-9_]*\1/.exec(sql.slice(i))?.[0] ?? ':';
      tokens.push({ kind: 'variable', text: match });
      i += match.length;
    } else if (WORD_START.test(c)) {
      let end = i + 1;
      while (end < sql.length && WORD_CHAR.test(sql.charAt(end))) end++;
      const text = sql.slice(i, end);
      // E'…', B'…', X'…', N'…' are one string: the prefix is no word.
      if (sql.charAt(end) === "'" && /^[EeBbXxNnUu]$/.test(text) && (dialect === 'postgres' || !/^[Ee]$/.test(text))) {
        i = end;
        continue;
      }
      tokens.push({ kind: 'word', text, upper: text.toUpperCase() });
      i = end;
    } else if (/\d/.test(c)) {
      const end = i + (/^\d[\d.eE_xXa-fA-F]*/.exec(sql.slice(i))?.[0].length ?? 1);
      tokens.push({ kind: 'number', text: sql.slice(i, end) });
      i = end;
    } else {
      tokens.push({ kind: 'punct', text: c });
      i++;
    }
  }
  return tokens;
}

/** Statements: runs of tokens split at `;` and at client commands, which stand alone. */
export function statements(tokens: readonly SqlToken[]): SqlToken[][] {
  const result: SqlToken[][] = [];
  let current: SqlToken[] = [];
  const close = () => {
    if (current.length > 0) result.push(current);
    current = [];
  };
  for (const token of tokens) {
    if (token.kind === 'punct' && token.text === ';') close();
    else if (token.kind === 'client') {
      close();
      result.push([token]);
    } else current.push(token);
  }
  close();
  return result;
}
