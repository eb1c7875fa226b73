// What a database client one-liner runs: the statements it is given (-c, -e, an operand, a here-document) and
// whether those statements lose data or reach past SQL (a shell escape, a file of more statements).
import type { Invocation } from './args.ts';
import { options, positionals } from './args.ts';

/** SQL statements that lose data: DROP, TRUNCATE, ALTER … DROP, or DELETE and UPDATE without a WHERE. */
export function isDestructiveSql(sql: string): boolean {
  return sql.split(';').some((statement) => {
    const s = statement.trim().toUpperCase();
    return (
      /^(DROP|TRUNCATE)\b/.test(s) ||
      /^ALTER\s+TABLE\b.*\bDROP\b/s.test(s) ||
      (/^(DELETE\s+FROM|UPDATE)\b/.test(s) && !/\bWHERE\b/.test(s))
    );
  });
}

// psql's \! and COPY … PROGRAM, mysql's system and \!, sqlite3's .shell and .system run shell commands; \i, source
// and .read run statements from a file.
const HIDDEN_IN_SQL: readonly (readonly [RegExp, string])[] = [
  [/\\!|^\s*(system|\.shell|\.system)\b/im, 'its statements run a shell command'],
  [/\bPROGRAM\s+['"$]/i, 'COPY … PROGRAM runs a shell command'],
  [/(^|[;\s])\\(i|ir|include|include_relative|\.)\s|^\s*(source|\.read)\s/im, 'its statements run the statements in a file'],
];

/** Why a statement given on the command line reaches past what it shows, or undefined when it does not. */
export function hiddenInSql(sql: string): string | undefined {
  return HIDDEN_IN_SQL.find(([pattern]) => pattern.test(sql))?.[1];
}

const psqlOptions = (inv: Invocation) =>
  options(inv, 'cdfhLopUvTPF', ['--command', '--dbname', '--file', '--host', '--port', '--username', '--set', '--variable', '--output', '--log-file']);

const SQL_CLIENTS = ['psql', 'mysql', 'mariadb', 'sqlite3', 'clickhouse-client'];
const SQLITE_VALUED = ['-cmd', '-separator', '-newline', '-nullvalue', '-init', '-vfs', '-maxsize', '-mmap', '-pagecache', '-lookaside', '-heap'];

/** Statements written into the command's input: a here-document or here-string (undefined when only known at run time). */
function inputStatements(inv: Invocation): (string | undefined)[] {
  return inv.redirects.flatMap((r) => (r.heredoc !== undefined ? [r.heredoc.value] : r.op === '<<<' ? [r.target.value] : []));
}

/**
 * The SQL a database client is told to run: -c/--command (psql), -e/--execute (mysql), -q/--query (clickhouse),
 * sqlite3's second operand, or a here-document. An entry is undefined when only known at run time; the result is
 * undefined for a command that is not a SQL client.
 */
export function sqlOf(inv: Invocation): (string | undefined)[] | undefined {
  const name = inv.name ?? '';
  if (!SQL_CLIENTS.includes(name)) return undefined;
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
      case 'sqlite3': {
        const operands = positionals(inv, SQLITE_VALUED);
        return operands.length > 1 ? [operands[1]] : [];
      }
      default:
        // mysql's -p takes its password only attached (`-psecret`): a bare -p prompts, it never takes the next word.
        return options(inv, 'eDhuPS', ['--execute', '--database', '--host', '--user', '--port', '--socket'])
          .filter((o) => o.name === '-e' || o.name === '--execute')
          .map((o) => o.value);
    }
  })();
  return [...given, ...inputStatements(inv)];
}

/**
 * Why a SQL client runs statements the command line does not show: from a file (psql -f, a `<` redirection) or from
 * its input when it is given none; undefined when every statement is on the command line, or it runs none.
 */
export function sqlFromElsewhere(inv: Invocation, statements: readonly (string | undefined)[]): string | undefined {
  if (inv.name === 'psql' && psqlOptions(inv).some((o) => o.name === '-f' || o.name === '--file')) return 'it runs the statements in a file';
  const from = inv.redirects.find((r) => r.op === '<');
  if (from !== undefined && statements.length === 0) return `it runs the statements in ${from.target.text}`;
  if (statements.length > 0) return undefined;
  const args = inv.args.map((w) => w.value);
  // Listing or asking for the version runs no statement; anything else reads statements from its input.
  if (inv.name === 'psql' && args.some((a) => a === '-l' || a === '--list')) return undefined;
  if (args.some((a) => ['--version', '-V', '--help', '-?', '-version', '-help'].includes(a ?? ''))) return undefined;
  return 'it runs the statements read from its input (a pipe or stdin)';
}
