// What SQL given to a client does, read from its tokens: whether a statement loses data, runs code or reads files the
// command line does not show, or only reads. EXPLAIN ANALYZE (in every spelling) is the statement it runs; a
// data-modifying CTE is a write; SELECT … INTO, FOR UPDATE/SHARE and functions off the read list are not reads.
import type { Dialect, SqlToken } from './sql-tokens.ts';
import { statements, tokenize } from './sql-tokens.ts';
import { NOT_CALLS, SYSTEM_SCHEMAS, isReadFunction } from './sql-functions.ts';

const DIALECTS: readonly Dialect[] = ['postgres', 'mysql', 'sqlite', 'clickhouse'];

const isWord = (t: SqlToken | undefined, ...words: string[]): boolean => t?.kind === 'word' && words.includes(t.upper);
const isPunct = (t: SqlToken | undefined, text: string): boolean => t?.kind === 'punct' && t.text === text;

const EXPLAIN_WORDS = ['ANALYZE', 'ANALYSE', 'VERBOSE', 'EXTENDED', 'PARTITIONS', 'FORMAT', 'JSON', 'TRADITIONAL', 'TREE', 'QUERY', 'PLAN'];
const OFF = ['FALSE', 'OFF', 'NO', '0'];

/**
 * The statement a statement runs: EXPLAIN without ANALYZE runs none (undefined); EXPLAIN ANALYZE, however spelled
 * (ANALYSE, `(ANALYZE)`, `(ANALYZE true, BUFFERS)`, comments between), runs what follows; anything else runs itself.
 */
export function runs(statement: readonly SqlToken[]): readonly SqlToken[] | undefined {
  if (!isWord(statement[0], 'EXPLAIN', 'DESCRIBE', 'DESC')) return statement;
  let i = 1;
  let analyze = false;
  if (isPunct(statement[1], '(')) {
    let depth = 0;
    for (; i < statement.length; i++) {
      const t = statement[i];
      if (isPunct(t, '(')) depth++;
      else if (isPunct(t, ')') && --depth === 0) break;
      else if (isWord(t, 'ANALYZE', 'ANALYSE')) {
        const next = statement[i + 1];
        const off = (next?.kind === 'word' || next?.kind === 'number') && OFF.includes(next.text.toUpperCase());
        if (!off) analyze = true;
      }
    }
    i++;
  }
  for (; i < statement.length; i++) {
    const t = statement[i];
    if (isWord(t, 'ANALYZE', 'ANALYSE')) analyze = true;
    else if (!(isWord(t, ...EXPLAIN_WORDS) || isPunct(t, '='))) break;
  }
  return analyze ? statement.slice(i) : undefined;
}

/** The first word after any opening parentheses. */
const leading = (statement: readonly SqlToken[]): SqlToken | undefined => statement.find((t) => !isPunct(t, '('));

/** True when a DELETE or UPDATE starting at `at` has a WHERE at its own depth before it ends. */
function hasWhere(statement: readonly SqlToken[], at: number): boolean {
  let depth = 0;
  for (let i = at + 1; i < statement.length; i++) {
    const t = statement[i];
    if (isPunct(t, '(')) depth++;
    else if (isPunct(t, ')')) {
      if (--depth < 0) return false;
    } else if (depth === 0 && isWord(t, 'WHERE')) return true;
  }
  return false;
}

/** A DELETE or UPDATE that changes rows (not `ON DELETE`, `FOR UPDATE`, `GRANT UPDATE`, …). */
function isDml(statement: readonly SqlToken[], i: number): boolean {
  const t = statement[i];
  const before = statement[i - 1];
  const starts = before === undefined || isPunct(before, '(');
  if (isWord(t, 'DELETE')) return starts || isWord(statement[i + 1], 'FROM');
  return isWord(t, 'UPDATE') && starts;
}

function destroys(statement: readonly SqlToken[]): boolean {
  const ran = runs(statement);
  if (ran === undefined) return false;
  const first = leading(ran);
  if (isWord(first, 'DROP', 'TRUNCATE')) return true;
  if (isWord(first, 'ALTER') && ran.some((t) => isWord(t, 'DROP'))) return true;
  return ran.some((_, i) => isDml(ran, i) && !hasWhere(ran, i));
}

const dialectsOf = (dialect: Dialect | undefined): readonly Dialect[] => (dialect === undefined ? DIALECTS : [dialect]);

/** SQL that loses data: DROP, TRUNCATE, ALTER … DROP, or DELETE or UPDATE without WHERE (in a CTE too). */
export function isDestructiveSql(sql: string, dialect?: Dialect): boolean {
  // Without a dialect, any client's reading that loses data counts.
  return dialectsOf(dialect).some((d) => statements(tokenize(sql, d)).some(destroys));
}

const FILE_COMMANDS: Readonly<Record<Dialect, readonly string[]>> = {
  postgres: ['i', 'ir', 'include', 'include_relative'],
  mysql: ['.'],
  sqlite: [],
  clickhouse: [],
};

/** sqlite3 matches a dot-command by any prefix it is long enough to tell apart. */
const sqlitePrefix = (name: string, command: string, min: number): boolean => name.length >= min && command.startsWith(name);

function clientCode(t: Extract<SqlToken, { kind: 'client' }>, dialect: Dialect): string | undefined {
  const name = t.name;
  if (dialect === 'sqlite') {
    if (sqlitePrefix(name, 'shell', 2) || sqlitePrefix(name, 'system', 2)) return 'its statements run a shell command';
    if (sqlitePrefix(name, 'read', 3)) return 'its statements run the statements in a file';
    if (sqlitePrefix(name, 'load', 3)) return 'it loads a native extension';
    if (/^['"]?\|/.test(t.args)) return 'it pipes output into a shell command';
    return undefined;
  }
  if (name === '!') return 'its statements run a shell command';
  if (FILE_COMMANDS[dialect].includes(name)) return 'its statements run the statements in a file';
  if (dialect === 'postgres') {
    if (t.args.includes('`')) return 'a backquoted psql argument runs a shell command';
    if (/^(e|edit|ef|ev)$/.test(name)) return 'it runs an editor';
    if (/^(o|out|g|gx|w|write|copy)$/.test(name) && /(^|\s)['"]?\||\bprogram\b/i.test(t.args)) return 'it pipes into a shell command';
  }
  return undefined;
}

function statementCode(statement: readonly SqlToken[], dialect: Dialect): string | undefined {
  const first = statement[0];
  if (first?.kind === 'client') return clientCode(first, dialect);
  if (dialect === 'mysql' && isWord(first, 'SYSTEM')) return 'its statements run a shell command';
  if (dialect === 'mysql' && isWord(first, 'SOURCE')) return 'its statements run the statements in a file';
  if (statement.some((t, i) => isWord(t, 'PROGRAM') && statement[i + 1]?.kind === 'string')) return 'COPY … PROGRAM runs a shell command';
  const called = calls(statement).find((c) => ['LOAD_EXTENSION', 'EDIT'].includes(c.name));
  if (called !== undefined) return `${called.name.toLowerCase()}() runs code the command line does not show`;
  return undefined;
}

/** Why statements reach past what they show (a shell command, a file of statements, native code), or undefined. */
export function hiddenInSql(sql: string, dialect?: Dialect): string | undefined {
  for (const d of dialectsOf(dialect)) {
    for (const statement of statements(tokenize(sql, d))) {
      const why = statementCode(statement, d);
      if (why !== undefined) return why;
    }
  }
  return undefined;
}

interface Call {
  readonly name: string;
  readonly schema: string | undefined;
}

/** Every name a `(` follows that grammar does not explain: a function call (or a type with modifiers). */
function calls(statement: readonly SqlToken[]): Call[] {
  const found: Call[] = [];
  statement.forEach((t, i) => {
    if (!isPunct(statement[i + 1], '(')) return;
    // MySQL reads "x" as a string unless the server's sql_mode has ANSI_QUOTES: then "x"(…) is a call.
    const doubleQuoted = t.kind === 'string' && t.text.startsWith('"');
    if (doubleQuoted) found.push({ name: t.text.slice(1, -1).toUpperCase(), schema: undefined });
    else if (t.kind === 'quoted' || (t.kind === 'word' && !NOT_CALLS.has(t.upper))) {
      const qualifier = isPunct(statement[i - 1], '.') ? statement[i - 2] : undefined;
      const schema = qualifier?.kind === 'word' || qualifier?.kind === 'quoted' ? qualifier.upper : undefined;
      found.push({ name: t.upper, schema });
    }
  });
  return found;
}

// Words that never belong in a statement that only reads: writes in a CTE, SELECT … INTO, row locks, DDL, DCL.
const WRITE_WORDS = new Set(
  `INSERT UPDATE DELETE MERGE UPSERT TRUNCATE DROP ALTER CREATE GRANT REVOKE COPY CALL DO EXECUTE EXEC LOCK INTO SHARE
  VACUUM ANALYZE ANALYSE REINDEX CLUSTER REFRESH NOTIFY LISTEN PREPARE DEALLOCATE DISCARD SET ATTACH DETACH LOAD OUTFILE
  DUMPFILE SAVEPOINT RELEASE ROLLBACK COMMIT BEGIN START REPLACE OPTIMIZE KILL SYSTEM`.split(/\s+/).filter((w) => w !== ''),
);

const READ_STARTS = ['SELECT', 'WITH', 'SHOW', 'TABLE', 'VALUES'];

// sqlite3 pragmas that only report; with `=` any pragma sets.
const READ_PRAGMAS = new Set(
  `table_info table_xinfo table_list index_list index_info index_xinfo foreign_key_list foreign_key_check database_list
  compile_options integrity_check quick_check page_count page_size user_version schema_version journal_mode encoding
  freelist_count function_list module_list pragma_list collation_list application_id auto_vacuum cache_size
  data_version max_page_count`.split(/\s+/).filter((w) => w !== ''),
);

// psql's commands that only describe or format; anything else (\o, \w, \g FILE, \gexec, \copy, \set, \!, …) is not.
const PSQL_READS = /^(d[A-Za-z]*\+?|l\+?|list\+?|conninfo|z|sf\+?|sv\+?|lo_list|x|a|t|timing|pset|echo|qecho|warn|q|quit|\?|h|help|copyright|errverbose|p|r|encoding|H|C|f|T)$/;
// psql commands that must have no arguments to only read (\g FILE writes, \encoding X sets, \watch N repeats).
const PSQL_BARE = /^(g|gx|encoding)$/;
const SQLITE_READS = new Set(
  `tables schema indexes indices databases dbinfo headers header mode show help fullschema width nullvalue separator timer
  stats echo eqp print version changes bail explain dump sha3sum vfsinfo vfslist vfsname`.split(/\s+/).filter((w) => w !== ''),
);

function clientReads(t: Extract<SqlToken, { kind: 'client' }>, dialect: Dialect): string | undefined {
  if (dialect === 'postgres') {
    const bare = PSQL_BARE.test(t.name) && t.args === '';
    if (!(bare || (PSQL_READS.test(t.name) && !PSQL_BARE.test(t.name)) || (t.name === 'watch' && /^[\d.]*$/.test(t.args)))) return `\\${t.name} is not a psql command known to only read`;
    if (/[`:]/.test(t.args)) return `\\${t.name} has an argument psql expands when it runs`;
    return undefined;
  }
  if (dialect === 'sqlite') return SQLITE_READS.has(t.name) ? undefined : `.${t.name} is not a sqlite3 command known to only read`;
  return t.name === 'G' || t.name === 'g' ? undefined : `\\${t.name} is not a client command known to only read`;
}

function pragmaReads(statement: readonly SqlToken[]): string | undefined {
  const nameAt = isPunct(statement[2], '.') ? 3 : 1;
  const name = statement[nameAt];
  if (statement.some((t) => isPunct(t, '='))) return 'PRAGMA … = sets a value';
  return name?.kind === 'word' && READ_PRAGMAS.has(name.text.toLowerCase()) ? undefined : `PRAGMA ${name?.text ?? ''} is not known to only read`;
}

function statementReads(statement: readonly SqlToken[], dialect: Dialect): string | undefined {
  const first = statement[0];
  if (first?.kind === 'client') return clientReads(first, dialect);
  const ran = runs(statement);
  if (ran === undefined) return undefined;
  const start = leading(ran);
  if (dialect === 'sqlite' && isWord(start, 'PRAGMA')) return pragmaReads(ran);
  if (dialect === 'mysql' && isWord(start, 'USE') && ran.length === 2) return undefined;
  if (!(start?.kind === 'word' && READ_STARTS.includes(start.upper))) return `${start?.kind === 'word' ? start.upper : 'this'} is not a statement that only reads`;
  const variable = ran.find((t) => t.kind === 'variable');
  if (variable !== undefined) return `${variable.text} is only known when psql runs`;
  // SHOW only reports (SHOW CREATE TABLE names a write word without doing one).
  if (start.upper === 'SHOW') return undefined;
  const written = ran.find((t, i) => t.kind === 'word' && WRITE_WORDS.has(t.upper) && !isPunct(ran[i + 1], '('));
  if (written?.kind === 'word') return `${written.upper} is not read-only`;
  const call = calls(ran).find((c) => !isReadFunction(c.name) || (c.schema !== undefined && !SYSTEM_SCHEMAS.has(c.schema)));
  if (call !== undefined) return `${call.schema === undefined ? '' : `${call.schema.toLowerCase()}.`}${call.name.toLowerCase()}() is not a function known to only read`;
  return undefined;
}

/** Why statements given to a client of `dialect` do more than read, or undefined when every one only reads. */
export function sqlNotRead(sql: string, dialect: Dialect): string | undefined {
  const all = statements(tokenize(sql, dialect));
  for (const statement of all) {
    const why = statementCode(statement, dialect) ?? statementReads(statement, dialect);
    if (why !== undefined) return why;
  }
  return undefined;
}

/** True when every statement starts the way a read does (SELECT, SHOW, a client command, …), whatever follows. */
export function startsAsRead(sql: string, dialect: Dialect): boolean {
  return statements(tokenize(sql, dialect)).every((statement) => {
    if (statement[0]?.kind === 'client') return true;
    const ran = runs(statement);
    const start = ran === undefined ? undefined : leading(ran);
    return ran === undefined || (start?.kind === 'word' && [...READ_STARTS, 'PRAGMA'].includes(start.upper));
  });
}
