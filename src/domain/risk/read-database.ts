// Database clients that only read: every option on the client's table, and every statement it runs read-only by
// sql-reading.ts. redis-cli reads with the commands that only report.
import type { Invocation } from './args.ts';
import type { Judgement } from './judgement.ts';
import { OTHER, READS, unlisted } from './judgement.ts';
import type { OptionTable } from './option-table.ts';
import { readArgs } from './option-table.ts';
import { dialectOf, sqlNotRead, sqlOf, startsAsRead } from './sql.ts';

const CLIENTS: Readonly<Record<string, OptionTable>> = {
  // Left out: -f/--file, -o/--output, -L/--log-file (files), anything that reads statements from elsewhere.
  psql: {
    short: 'c:d:h:p:U:wWXAtxqF:R:z0P:v:lbeEanSs1HT:V?',
    long: `command= dbname= host= port= username= no-password password no-psqlrc no-align tuples-only expanded quiet
      field-separator= record-separator= field-separator-zero record-separator-zero pset= set= variable= list echo-errors
      echo-queries echo-hidden echo-all no-readline single-line single-step single-transaction html table-attr= csv
      version help=?`,
  },
  // Left out: --init-command, --tee, --pager, --defaults-file, --defaults-extra-file, --local-infile, --plugin-dir,
  // --default-auth (they run statements or load code from elsewhere, or write files).
  mysql: {
    short: 'e:D:h:u:P:S:p::BNstrEHXvAV?',
    long: `execute= database= host= user= port= socket= password=? batch skip-column-names silent table raw vertical html
      xml column-names verbose no-auto-rehash protocol= ssl ssl-mode= ssl-ca= ssl-cert= ssl-key= connect-timeout=
      max-allowed-packet= default-character-set= no-defaults version help`,
  },
  // Left out: -cmd and -init (statements from elsewhere), -A/-append/-zip/-deserialize/-vfs and the memory knobs.
  sqlite3: {
    words: `header noheader column csv json line list html markdown table box tabs quote ascii separator= newline=
      nullvalue= readonly bail echo batch version help safe nofollow stats`,
  },
  // Left out: --queries-file, --config-file, --history_file.
  'clickhouse-client': {
    short: 'q:h:u:d:f:nmtV',
    long: 'query= host= port= user= password= database= format= multiquery multiline time secure version help',
  },
};

const REDIS_OPTIONS: OptionTable = {
  // Left out: --rdb, --functions-rdb, --pipe, --cluster, --eval, --replica (they write files, load data or act).
  short: 'h:p:a:n:u:s:r:i:c3x',
  long: 'user= pass= tls no-auth-warning raw no-raw csv json verbose scan pattern= count= bigkeys memkeys hotkeys stat latency latency-history help version',
};

// Commands that only report; CLIENT, MEMORY and SLOWLOG only with their reporting verbs.
const REDIS_READS = /^(get|mget|info|ping|keys|scan|ttl|pttl|type|exists|dbsize|hget|hgetall|hkeys|hlen|hmget|hexists|llen|lrange|lindex|scard|smembers|sismember|zrange|zcard|zscore|zrank|strlen|time|lastsave|role|echo|getrange|xlen|xrange|xinfo|object)$/i;
const REDIS_VERBS: Readonly<Record<string, RegExp>> = { client: /^(list|info|getname|id)$/i, memory: /^(usage|stats|doctor)$/i, slowlog: /^(get|len)$/i, config: /^get$/i };

function redisReads(inv: Invocation): Judgement {
  const reading = readArgs(inv.args, REDIS_OPTIONS);
  if (!reading.ok) return unlisted(reading.why);
  const [command, verb] = reading.operands.map((w) => w.value);
  if (command === undefined) return reading.options.some((o) => ['--scan', '--bigkeys', '--memkeys', '--stat', '--latency', '--version', '--help'].includes(o.name)) ? READS : OTHER;
  if (REDIS_READS.test(command)) return READS;
  const verbs = REDIS_VERBS[command.toLowerCase()];
  return verbs !== undefined && verbs.test(verb ?? '') ? READS : OTHER;
}

export function judgeDatabase(inv: Invocation): Judgement {
  if (inv.name === 'redis-cli') return redisReads(inv);
  const dialect = dialectOf(inv);
  const table = CLIENTS[inv.name === 'mariadb' ? 'mysql' : inv.name ?? ''];
  if (dialect === undefined || table === undefined) return OTHER;
  const reading = readArgs(inv.args, table);
  if (!reading.ok) return unlisted(reading.why);
  const sql = sqlOf(inv) ?? [];
  if (sql.length === 0) return inv.name === 'psql' && reading.options.some((o) => o.name === '-l' || o.name === '--list') ? READS : OTHER;
  for (const statement of sql) {
    if (statement === undefined) return unlisted('its statements are only known at run time');
    const why = sqlNotRead(statement, dialect);
    // A statement that is not a read at all (UPDATE, DROP) is left to the change rules; a read with a part that is
    // not (SELECT writefile(…), FOR UPDATE) says which part.
    if (why !== undefined) return startsAsRead(statement, dialect) ? unlisted(why) : OTHER;
  }
  return READS;
}


/** The client tables, for the tests that prove every listed option reads. */
export const DATABASE_CLIENT_TABLES = CLIENTS;
