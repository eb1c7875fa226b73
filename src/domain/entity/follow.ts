// The inventory follows what runs: a successful `pct create ID … --hostname NAME` on a host adds lxc:NAME under
// it, and a successful `pct destroy ID` marks that container destroyed. Only when the whole command is that one
// simple command (`sudo` in front of it the one wrapper allowed), read by the classifier's own parser: in a list,
// a pipeline, a substitution, behind `!` or `&`, or with an operand known only at run time, the exit status says
// nothing about whether pct ran, so nothing follows. Pure.
import type { CallExpr } from 'mvdan-sh';
import { nodeType, parseAst, wordValue } from '../risk/parse.ts';

export type InventoryEffect = { readonly kind: 'created'; readonly pveId: number; readonly hostname: string } | { readonly kind: 'destroyed'; readonly pveId: number };

const HOSTNAME = /^[A-Za-z0-9._-]{1,63}$/;

/** The words of the command when it is exactly one plain simple command, every word literal; null otherwise. */
function soleCommand(command: string): string[] | null {
  const parsed = parseAst(command);
  if (!parsed.ok || parsed.file.Stmts.length !== 1) return null;
  const stmt = parsed.file.Stmts[0]!;
  if (stmt.Negated || stmt.Background || stmt.Coprocess || stmt.Redirs.length > 0 || stmt.Cmd === null || nodeType(stmt.Cmd) !== 'CallExpr') return null;
  const call = stmt.Cmd as CallExpr;
  if (call.Assigns.length > 0) return null;
  const argv = call.Args.map((word) => wordValue(word));
  return argv.every((w): w is string => w !== undefined) ? argv : null;
}

export function inventoryEffect(command: string): InventoryEffect | null {
  const words = soleCommand(command);
  const argv = words?.[0] === 'sudo' ? words.slice(1) : words;
  if (argv == null || argv[0] !== 'pct' || argv[2] === undefined || !/^\d+$/.test(argv[2])) return null;
  const pveId = Number(argv[2]);
  if (argv[1] === 'destroy') return { kind: 'destroyed', pveId };
  if (argv[1] !== 'create') return null;
  const at = argv.indexOf('--hostname');
  const inline = argv.find((a) => a.startsWith('--hostname='))?.slice('--hostname='.length);
  const hostname = inline ?? (at >= 0 ? argv[at + 1] : undefined);
  return hostname !== undefined && HOSTNAME.test(hostname) ? { kind: 'created', pveId, hostname } : null;
}
