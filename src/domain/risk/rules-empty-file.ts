// Emptying a file: a truncating redirection of a command that prints nothing, truncate to a smaller size, or a copy
// of /dev/null over it. Logs and state files are emptied this way, and nothing keeps what was in them.
import type { Invocation } from './args.ts';
import { named, options, positionals, values } from './args.ts';
import { truncatesFile } from './redirects.ts';
import type { Rule } from './rule.ts';

// Commands that print nothing, so a truncating redirection of theirs leaves the file empty.
function printsNothing(inv: Invocation): boolean {
  const args = values(inv);
  switch (inv.name ?? '') {
    case ':':
    case 'true':
    case 'false':
      return true;
    case 'exec':
      return args.length === 0;
    case 'cat':
      return args.length > 0 && args.every((a) => a === '/dev/null');
    case 'echo':
      return args.every((a) => a === '' || /^-[neE]+$/.test(a));
    case 'printf':
      return args.length === 1 && args[0] === '';
    default:
      return false;
  }
}

/** truncate shrinks a file unless every size only extends (`+N`, `>N`, `%N`); -r copies a size, which may shrink. */
function truncateShrinks(inv: Invocation): boolean {
  const sizes = options(inv, 'sr', ['--size', '--reference']);
  if (sizes.some((o) => o.name === '-r' || o.name === '--reference')) return true;
  return sizes.filter((o) => o.name === '-s' || o.name === '--size').some((o) => !/^[+>%]/.test(o.value ?? ''));
}

export const EMPTY_FILE_RULE: Rule = {
  id: 'empty-file',
  class: 'destructive',
  reason: 'empties or shrinks a file that may exist: its contents are lost',
  examples: [
    ': > /var/log/syslog',
    '> /var/log/big.log',
    'cat /dev/null > /var/log/nginx/access.log',
    'echo -n > /var/lib/app/state.json',
    'truncate -s 0 /var/log/big.log',
    'truncate --size=10M /srv/disk.img',
    'cp /dev/null /var/log/auth.log',
    "sudo sh -c ': > /var/log/kern.log'",
  ],
  match: (inv) =>
    (printsNothing(inv) && inv.redirects.some(truncatesFile)) ||
    (named('truncate')(inv) && truncateShrinks(inv)) ||
    (named('cp')(inv) && positionals(inv, ['-t', '--target-directory', '-S', '--suffix'])[0] === '/dev/null'),
};
