// Every read-only table proves itself both ways: each option it lists keeps the command read-only on its own, and an
// option it does not list (generated per table, short and long) makes the command at least a mutation.
import { describe, expect, it } from 'vitest';
import type { RiskClass } from '../../../src/domain/risk/index.ts';
import { RISK_CLASSES, classify } from '../../../src/domain/risk/index.ts';
import { GIT_TABLES } from '../../../src/domain/risk/git.ts';
import type { OptionTable } from '../../../src/domain/risk/option-table.ts';
import { listedOptions } from '../../../src/domain/risk/option-table.ts';
import { DATABASE_CLIENT_TABLES } from '../../../src/domain/risk/read-database.ts';
import { READ_TOOL_TABLES } from '../../../src/domain/risk/read-tools.ts';

const atLeast = (risk: RiskClass, floor: RiskClass): boolean => RISK_CLASSES.indexOf(risk) >= RISK_CLASSES.indexOf(floor);

/** What must follow a tool's option for the command to be a read form at all (a URL, a pid to trace, …). */
const BASE: Readonly<Record<string, string>> = {
  curl: '-G http://example.com',
  wget: '-O - http://example.com',
  nslookup: 'example.com',
  ping: '-c 1 192.0.2.1',
  ping6: '-c 1 2001:db8::1',
  find: '/tmp',
  sed: "-e p /etc/hosts",
  awk: "'{print}' /etc/hosts",
  gawk: "'{print}' /etc/hosts",
  mawk: "'{print}' /etc/hosts",
};

/** A value each option's check accepts; 'x' for the rest. */
const VALUE: Readonly<Record<string, string>> = {
  '-o': '/dev/null', '--output': '/dev/null', '-D': '/dev/null', '--dump-header': '/dev/null', '-c': '/dev/null',
  '--cookie-jar': '/dev/null', '--stderr': '/dev/null', '--trace': '/dev/null', '--trace-ascii': '/dev/null',
  '-O': '-', '--output-document': '-', '-a': '/dev/null', '--append-output': '/dev/null', '--output-file': '/dev/null',
  '-X': 'HEAD', '--request': 'GET', '--method': 'GET', '-b': 'a=b', '--cookie': 'a=b', '--url': 'https://example.com',
  '-W': 'version', '-n': 'v', '-p': '1',
};

function optionCommand(tool: string, name: string, arity: string): string {
  const given = arity === 'required' ? `${name} ${VALUE[name] ?? 'x'}` : name;
  return [tool, given, BASE[tool] ?? ''].join(' ').trim();
}

const TOOL_CASES = [...READ_TOOL_TABLES].flatMap(([tool, table]) =>
  listedOptions(table).map(({ name, arity }) => [tool, optionCommand(tool, name, arity)] as const),
);

describe('every option a read-only tool table lists', () => {
  it('covers every table', () => {
    expect(READ_TOOL_TABLES.size).toBeGreaterThan(100);
    expect(TOOL_CASES.length).toBeGreaterThan(1000);
  });

  it.each(TOOL_CASES)('%s: %j stays read-only', (_tool, command) => {
    expect(classify(command).risk_class).toBe('reversible_low');
  });
});

/** A short letter and a long name the table does not list. */
function unknownOptions(table: OptionTable): string[] {
  const listed = new Set(listedOptions(table).map((o) => o.name));
  const letter = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'].find((l) => !listed.has(`-${l}`));
  const found = ['--no-such-option', '--output=/tmp/out', '--exec=/bin/sh'].filter((o) => !listed.has(o.split('=')[0] ?? o));
  if (table.words !== undefined) found.push('-nosuchword');
  else if (letter !== undefined) found.push(`-${letter}`);
  return found;
}

const UNKNOWN_CASES = [...READ_TOOL_TABLES]
  .filter(([, table]) => table.freeForm !== true)
  .flatMap(([tool, table]) => unknownOptions(table).map((option) => [tool, [tool, option, BASE[tool] ?? ''].join(' ').trim()] as const));

describe('an option a read-only tool table does not list', () => {
  it.each(UNKNOWN_CASES)('%s: %j is at least a mutation', (_tool, command) => {
    expect(atLeast(classify(command).risk_class, 'config_mutation')).toBe(true);
  });

  it('names the option in the reason when nothing more specific decides', () => {
    const verdict = classify('git log --output=/tmp/f');
    expect(verdict.rule).toBe('unlisted-option');
    expect(verdict.reason).toContain('--output');
  });
});

describe('a word only known at run time where an option could be', () => {
  const partial = [...READ_TOOL_TABLES].filter(([tool, t]) => t.everyOptionReads !== true && t.freeForm !== true && BASE[tool] === undefined);
  it.each(partial.map(([tool]) => [tool, `${tool} "$X"`]))('%s: %j is at least a mutation', (_tool, command) => {
    expect(atLeast(classify(command).risk_class, 'config_mutation')).toBe(true);
  });

  const complete = [...READ_TOOL_TABLES].filter(([tool, t]) => t.everyOptionReads === true && t.operands === undefined && BASE[tool] === undefined);
  // A network tool given a name built at run time may carry data off the host in it: exfiltration (rules-exposure.ts).
  const sendsOff = (tool: string): boolean => classify(`${tool} "$X"`).rule === 'exfiltration';
  it.each(complete.filter(([tool]) => !sendsOff(tool)).map(([tool]) => [tool, `${tool} "$X"`]))('%s: %j stays read-only (every option it has only reads)', (_tool, command) => {
    expect(classify(command).risk_class).toBe('reversible_low');
  });
  it.each(complete.filter(([tool]) => sendsOff(tool)).map(([tool]) => [tool, `${tool} "$X"`]))('%s: %j is exfiltration, needing an approval', (tool, command) => {
    expect(['dig', 'host', 'traceroute', 'tracepath', 'ping', 'nslookup', 'mtr', 'whois']).toContain(tool);
    expect(classify(command).risk_class).toBe('config_mutation');
  });
});

// git: `git SUB OPTION` for every option of every read sub-command, and every global option before status.
const GIT_CASES = [
  ...listedOptions(GIT_TABLES.global)
    .filter(({ name }) => !['--version', '--help', '-h', '--html-path', '--man-path', '--info-path', '--list-cmds'].includes(name))
    .map(({ name, arity }) => `git ${arity === 'required' ? `${name} /srv/app` : name} status`),
  ...Object.entries(GIT_TABLES.subcommands).flatMap(([sub, table]) =>
    listedOptions(table).map(({ name, arity }) => `git ${sub} ${arity === 'required' ? `${name} x` : name}`),
  ),
];

describe('git: every option its read tables list', () => {
  it.each(GIT_CASES.map((c) => [c]))('%j stays read-only', (command) => {
    expect(classify(command).risk_class).toBe('reversible_low');
  });
});

const SQL_BY_CLIENT: Readonly<Record<string, string>> = {
  psql: "-c 'SELECT 1'",
  mysql: "-e 'SELECT 1'",
  sqlite3: "app.db 'SELECT 1'",
  'clickhouse-client': "--query 'SELECT 1'",
};

describe('database clients: every option their read tables list', () => {
  const cases = Object.entries(DATABASE_CLIENT_TABLES).flatMap(([client, table]) =>
    listedOptions(table)
      .filter(({ name }) => !['-c', '--command', '-e', '--execute', '-q', '--query'].includes(name))
      .map(({ name, arity }) => `${client} ${arity === 'required' ? `${name} x` : name} ${SQL_BY_CLIENT[client] ?? ''}`),
  );
  it.each(cases.map((c) => [c]))('%j stays read-only', (command) => {
    expect(classify(command).risk_class).toBe('reversible_low');
  });
});
