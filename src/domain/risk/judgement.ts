// How a read rule judges a command: it only reads; it is not a form the rule covers (a sub-command that changes
// things, left to the change rules); or it is one, but an option or operand is not on the rule's read-only list.
import type { Invocation } from './args.ts';
import type { OptionTable } from './option-table.ts';
import { readArgs } from './option-table.ts';
import type { Word } from './parse.ts';

export type Judgement =
  | { readonly kind: 'reads' }
  | { readonly kind: 'other' }
  | { readonly kind: 'unlisted'; readonly why: string };

export const READS: Judgement = { kind: 'reads' };
export const OTHER: Judgement = { kind: 'other' };
export const unlisted = (why: string): Judgement => ({ kind: 'unlisted', why });

/** Reads when every argument is on the table. */
export function byTable(args: readonly Word[], table: OptionTable): Judgement {
  const reading = readArgs(args, table);
  return reading.ok ? READS : unlisted(reading.why);
}

export type Judge = (inv: Invocation) => Judgement;
