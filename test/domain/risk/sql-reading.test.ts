// SQL read from tokens, spelled many ways: EXPLAIN ANALYZE is the statement it runs, a data-modifying CTE is a write,
// SELECT INTO, row locks and functions off the read list are not reads, client commands are allow-listed, and a
// keyword inside a string, a dollar quote or a comment is no keyword.
import { describe, expect, it } from 'vitest';
import type { RiskClass } from '../../../src/domain/risk/index.ts';
import { RISK_CLASSES, classify } from '../../../src/domain/risk/index.ts';

const atLeast = (risk: RiskClass, floor: RiskClass): boolean => RISK_CLASSES.indexOf(risk) >= RISK_CLASSES.indexOf(floor);
const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The statement given to each client the ways they take it (-c, -e, an operand, a here-document, sudo -u postgres). */
const byClient = (sql: string, clients: readonly string[] = ['psql', 'mysql', 'sqlite3']): string[] =>
  clients.flatMap((client) => {
    const flag = client === 'psql' ? `psql -c ${quote(sql)}` : client === 'mysql' ? `mysql -e ${quote(sql)}` : `sqlite3 app.db ${quote(sql)}`;
    return [flag, `${client === 'sqlite3' ? 'sqlite3 app.db' : client} <<'EOF'\n${sql};\nEOF`, `sudo -u postgres ${flag}`];
  });

const classes = (commands: readonly string[]): RiskClass[] => commands.map((c) => classify(c).risk_class);
/** The commands whose class is below `floor`, so a failure names them. */
const below = (commands: readonly string[], floor: RiskClass): string[] => commands.filter((c) => !atLeast(classify(c).risk_class, floor));

function cased(text: string): string[] {
  return [text, text.toLowerCase(), text.toUpperCase(), text.replace(/\b(\w)(\w*)/g, (_m, a: string, b: string) => a.toLowerCase() + b.toUpperCase())];
}

describe('EXPLAIN ANALYZE runs the statement it explains', () => {
  const prefixes = [
    'EXPLAIN ANALYZE', 'EXPLAIN ANALYSE', 'EXPLAIN (ANALYZE)', 'EXPLAIN (ANALYSE)', 'EXPLAIN (ANALYZE true, BUFFERS)', 'EXPLAIN (BUFFERS, ANALYZE on)',
    'EXPLAIN (ANALYZE 1)', 'EXPLAIN (FORMAT JSON, ANALYZE)', 'EXPLAIN ANALYZE VERBOSE', 'EXPLAIN /* plan */ ANALYZE', 'EXPLAIN -- x\nANALYSE',
    'EXPLAIN\n\tANALYZE', 'explain /**/ (analyze) ',
  ];
  it.each(prefixes)('%j … is destructive when the statement loses data, in any case', (p) => {
    const commands = cased(p).flatMap((q) => ['DELETE FROM events', 'UPDATE t SET a = 1', 'DELETE /* all */ FROM t'].flatMap((s) => byClient(`${q} ${s}`, ['psql'])));
    expect(below(commands, 'destructive')).toEqual([]);
  });

  it('is at least a mutation when it writes at all', () => {
    const commands = prefixes.flatMap((p) => byClient(`${p} INSERT INTO t VALUES (1)`, ['psql']).concat(byClient(`${p} UPDATE t SET a = 1 WHERE id = 2`, ['psql'])));
    expect(below(commands, 'config_mutation')).toEqual([]);
  });

  it('without ANALYZE (or with ANALYZE off) it only plans', () => {
    const commands = ['EXPLAIN DELETE FROM t', 'EXPLAIN (ANALYZE false) DELETE FROM t', 'EXPLAIN (ANALYZE off, COSTS) UPDATE t SET a = 1', 'EXPLAIN (FORMAT JSON) SELECT 1', 'EXPLAIN VERBOSE SELECT 1'].flatMap((s) => byClient(s, ['psql']));
    expect(classes(commands).filter((c) => c !== 'reversible_low')).toEqual([]);
  });
});

describe('writes hidden in a read-looking statement', () => {
  it('a data-modifying CTE is a write (destructive without WHERE)', () => {
    const destructive = ['WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d', 'with x as (select 1), u as (update t set a = 1 returning *) select * from u', 'WITH d AS (DELETE FROM t WHERE a IN (SELECT b FROM c WHERE d)) SELECT 1'];
    expect(classes(destructive.flatMap(cased).flatMap((s) => byClient(s, ['psql'])))).not.toContain('reversible_low');
    expect(classes(destructive.slice(0, 2).flatMap((s) => byClient(s, ['psql'])))).toEqual(Array(6).fill('destructive'));
    expect(classes(byClient('WITH u AS (UPDATE t SET a = 1 WHERE id = 2 RETURNING *) SELECT * FROM u', ['psql']))).toEqual(Array(3).fill('config_mutation'));
  });

  it('SELECT … INTO, FOR UPDATE/SHARE and LOCK IN SHARE MODE are not reads', () => {
    const statements = ['SELECT * INTO new_t FROM t', "SELECT * FROM t INTO OUTFILE '/tmp/x'", 'SELECT a INTO @v FROM t', 'SELECT * FROM t FOR UPDATE', 'SELECT * FROM t FOR NO KEY UPDATE', 'SELECT * FROM t FOR SHARE', 'SELECT * FROM t FOR KEY SHARE', 'SELECT * FROM t LOCK IN SHARE MODE'];
    expect(below(statements.flatMap(cased).flatMap((s) => byClient(s)), 'config_mutation')).toEqual([]);
  });

  it('functions off the read list are not reads, however they are called', () => {
    const functions = ['writefile', 'lo_export', 'lo_import', 'pg_terminate_backend', 'pg_cancel_backend', 'pg_reload_conf', 'set_config', 'nextval', 'setval', 'dblink_exec', 'dblink', 'pg_read_file', 'pg_ls_dir', 'query_to_xml', 'load_file', 'sleep', 'pg_sleep', 'txid_current', 'readfile', 'fts3_tokenizer', 'my_function'];
    const spellings = (f: string): string[] => [`SELECT ${f}(1)`, `select ${f.toUpperCase()} (1)`, `SELECT "${f}"(1)`, `SELECT pg_catalog.${f}(1)`, `SELECT 1 FROM t WHERE ${f}(1) > 0`, `SELECT /* x */ ${f}(1)`, `SELECT count(*), ${f}('a') FROM t`];
    // One client in turn per spelling keeps the run short; each client meets every function.
    const clients = ['psql', 'mysql', 'sqlite3'];
    const commands = functions.flatMap((f, i) => spellings(f).flatMap((s, j) => byClient(s, [clients[(i + j) % 3] ?? 'psql'])));
    expect(below([...commands, ...byClient('SELECT public.count(1)')], 'config_mutation')).toEqual([]);
  });

  it('load_extension() and edit() run code the command line does not show', () => {
    expect(classes(byClient("SELECT load_extension('/tmp/evil.so')", ['sqlite3']).concat(byClient("SELECT edit('x', 'vi')", ['sqlite3'])))).toEqual(Array(6).fill('destructive'));
  });

  it('mysql runs the text of /*! comments', () => {
    expect(classify(`mysql -e ${quote('SELECT 1 /*! ; DROP TABLE t */')}`).risk_class).toBe('destructive');
    expect(classify(`mysql -e ${quote("SELECT 'a\\''; DROP TABLE t; -- '")}`).risk_class).toBe('destructive');
  });
});

describe('what only reads stays read-only', () => {
  it('plain queries, read functions, and keywords inside strings, dollar quotes or comments', () => {
    const reads = [
      'SELECT count(*) FROM events', "SELECT 'DROP TABLE t; DELETE FROM x'", 'SELECT 1 -- DELETE FROM t', 'SELECT 1 /* UPDATE t SET a = 1 */',
      'SELECT coalesce(max(position), 0), now() FROM events', 'SELECT date_trunc(\'day\', created_at), count(*) FROM t GROUP BY 1 ORDER BY 1 DESC LIMIT 5',
      'SELECT a FROM t WHERE b IN (SELECT c FROM d) AND EXISTS (SELECT 1)', 'SHOW server_version', 'TABLE events', 'VALUES (1), (2)',
      'SELECT pg_size_pretty(pg_database_size(current_database()))', 'SELECT cast(a AS numeric(10, 2)) FROM t',
    ];
    expect(reads.flatMap((s) => byClient(s, ['psql'])).filter((c) => classify(c).risk_class !== 'reversible_low')).toEqual([]);
    // An E'' string takes backslash escapes: the quote after a backslash does not end it. (Given with -c: parse.ts drops
    // backslashes from a quoted here-document's body, a disagreement reported to its owner.)
    expect(classes(['psql -c \'SELECT $$UPDATE t SET a = 1 WHERE x$$\'', "mysql -e 'SHOW CREATE TABLE t'", "sqlite3 app.db 'PRAGMA table_info(users)'", "mysql -e 'USE app; SELECT 1'", `psql -c ${quote("SELECT E'\\' UPDATE t SET a = 1'")}`])).toEqual(Array(5).fill('reversible_low'));
  });
});

describe('client commands: only those that describe or format read', () => {
  it('psql meta-commands that write, run or set are not read-only', () => {
    const metas = ['\\o /tmp/x', '\\out /tmp/x', '\\w /tmp/x', 'SELECT 1 \\g /tmp/x', '\\gexec', '\\copy t to /tmp/x', '\\copy t from /tmp/x', '\\set x 1', '\\setenv PAGER sh', '\\cd /tmp', '\\s /tmp/hist', '\\prompt x', '\\c other', '\\echo `id`', '\\d :tbl'];
    expect(classes(metas.map((m) => `psql -c ${quote(m)}`)).filter((c) => !atLeast(c, 'config_mutation'))).toEqual([]);
    expect(classes(['\\! id', '\\i /tmp/x.sql', '\\ir x.sql', '\\o |sh', '\\e', '\\echo `id`'].map((m) => `psql -c ${quote(m)}`))).toEqual(Array(6).fill('destructive'));
  });

  it('psql meta-commands that describe stay read-only', () => {
    expect(classes(['\\dt', '\\d+ events', '\\dtS+', '\\l', '\\conninfo', '\\x', '\\du', '\\dx', '\\sf myfn'].map((m) => `psql -c ${quote(m)}`))).toEqual(Array(9).fill('reversible_low'));
  });

  it('sqlite3 dot-commands that write, run or open are not read-only, abbreviated too', () => {
    const dots = ['.output /tmp/x', '.once /tmp/x', '.save /tmp/x', '.backup /tmp/x', '.import /tmp/x t', '.open /tmp/new.db', '.restore /tmp/x', '.clone /tmp/x', '.log /tmp/x', '.trace /tmp/x', '.cd /tmp', '.excel', '.dbconfig writable_schema on', '.tab', '.parameter set :x 1'];
    expect(classes(dots.map((d) => `sqlite3 app.db ${quote(d)}`)).filter((c) => !atLeast(c, 'config_mutation'))).toEqual([]);
    const code = ['.shell id', '.sh id', '.system id', '.sys id', '.read /tmp/x.sql', '.load /tmp/evil', ".output '|sh'", '.once |sh'];
    expect(classes(code.map((d) => `sqlite3 app.db ${quote(d)}`).concat(code.map((d) => `sqlite3 -cmd ${quote(d)} app.db 'SELECT 1'`)))).toEqual(Array(16).fill('destructive'));
    expect(classify("sqlite3 -init /tmp/x.sql app.db 'SELECT 1'").risk_class).toBe('destructive');
  });

  it('sqlite3 runs every SQL operand, not only the first', () => {
    expect(classify("sqlite3 app.db 'SELECT 1' 'DROP TABLE users'").risk_class).toBe('destructive');
  });

  it('sqlite3 dot-commands that describe stay read-only', () => {
    expect(classes(['.tables', '.schema users', '.indexes', '.databases', '.headers on', '.mode csv', '.dump'].map((d) => `sqlite3 app.db ${quote(d)}`))).toEqual(Array(7).fill('reversible_low'));
  });
});
