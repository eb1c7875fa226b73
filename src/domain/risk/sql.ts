// What a database client one-liner runs: the statements it is given (-c, -e, an operand, -cmd, a here-document) and
// whether those statements lose data or reach past SQL (a shell escape, a file of more statements). The statements
// themselves are read token by token in sql-reading.ts.
import type { Invocation } from './args.ts';
import { options, positionals } from './args.ts';
import type { Dialect } from './sql-tokens.ts';

export { hiddenInSql, isDestructiveSql, sqlNotRead, startsAsRead } from './sql-reading.ts';

const psqlOptions = (inv: Invocation) =>
  options(inv, 'cdfhLopUvTPF', ['--command', '--dbname', '--file', '--host', '--port', '--username', '--set', '--variable', '--output', '--log-file']);

const DIALECTS: Readonly<Record<string, Dialect>> = {
  psql: 'postgres',
  mysql: 'mysql',
  mariadb: 'mysql',
  sqlite3: 'sqlite',
  'clickhouse-client': 'clickhouse',
};

/** The dialect a SQL client reads, or undefined for a command that is none. */
export const dialectOf = (inv: Invocation): Dialect | undefined => (inv.name === undefined ? undefined : DIALECTS[inv.name]);

// sqlite3 takes its options with one dash or two.
const SQLITE_VALUED = ['-cmd', '-separator', '-newline', '-nullvalue', '-init', '-vfs', '-maxsize', '-mmap', '-pagecache', '-lookaside', '-heap', '-zip'];
const sqliteValued = [...SQLITE_VALUED, ...SQLITE_VALUED.map((o) => `-${o}`)];

/** Statements written into the command's input: a here-document or here-string (undefined when only known at run time). */
function inputStatements(inv: Invocation): (string | undefined)[] {
  return inv.redirects.flatMap((r) => (r.heredoc !== undefined ? [r.heredoc.value] : r.op === '<<<' ? [r.target.value] : []));
}

/** sqlite3's -cmd values: dot-commands or statements run before the others. */
function sqliteCommands(inv: Invocation): (string | undefined)[] {
  return inv.args.flatMap((w, i) => (w.value === '-cmd' || w.value === '--cmd' ? [inv.args[i + 1]?.value] : []));
}

/**
 * The SQL a database client is told to run: -c/--command (psql), -e/--execute and --init-command (mysql), -q/--query
 * (clickhouse), every sqlite3 operand after the database and its -cmd values, or a here-document. An entry is
 * undefined when only known at run time; the result is undefined for a command that is not a SQL client.
 */
export function sqlOf(inv: Invocation): (string | undefined)[] | undefined {
  const name = inv.name ?? '';
  if (!(name in DIALECTS)) return undefined;
  const given = ((): (string | undefined)[] => {
    switch (name) {
      case 'psql':
        return psqlOptions(inv)
          .filter((o) => o.name === '-c' || o.name === '--command')
          .map((o) => o.value);
      case 'clickhouse-client':
        return options(inv, 'qhudP', ['--query', '--host', '--user', '--database', '--password', '--port'])
          .filter((o) => o.name === '-q' || o.name === '--query')
          .map((o) => o.value);
      case 'sqlite3':
        return [...sqliteCommands(inv), ...positionals(inv, sqliteValued).slice(1)];
      default:
        // mysql's -p takes its password only attached (`-psecret`): a bare -p prompts, it never takes the next word.
        return options(inv, 'eDhuPS', ['--execute', '--database', '--host', '--user', '--port', '--socket', '--init-command'])
          .filter((o) => o.name === '-e' || o.name === '--execute' || o.name === '--init-command')
          .map((o) => o.value);
    }
  })();
  return [...given, ...inputStatements(inv)];
}

/**
 * Why a SQL client runs statements the command line does not show: from a file (psql -f, sqlite3 -init, mysql
 * --defaults-file's init-command, a `<` redirection) or from its input when it is given none; undefined when every
 * statement is on the command line, or it runs none.
 */
export function sqlFromElsewhere(inv: Invocation, statements: readonly (string | undefined)[]): string | undefined {
  if (inv.name === 'psql' && psqlOptions(inv).some((o) => o.name === '-f' || o.name === '--file')) return 'it runs the statements in a file';
  if (inv.name === 'sqlite3' && inv.args.some((w) => w.value === '-init' || w.value === '--init')) return 'it runs the statements in its -init file';
  const from = inv.redirects.find((r) => r.op === '<');
  if (from !== undefined && statements.length === 0) return `it runs the statements in ${from.target.text}`;
  if (statements.length > 0) return undefined;
  const args = inv.args.map((w) => w.value);
  // Listing or asking for the version runs no statement; anything else reads statements from its input.
  if (inv.name === 'psql' && args.some((a) => a === '-l' || a === '--list')) return undefined;
  if (args.some((a) => ['--version', '-V', '--help', '-?', '-version', '-help'].includes(a ?? ''))) return undefined;
  return 'it runs the statements read from its input (a pipe or stdin)';
}
