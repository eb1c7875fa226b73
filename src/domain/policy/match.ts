// Whether a rule's words start a simple command the classifier judged. Words are compared whole, after the shell's
// quote removal; a word only known at run time matches nothing.
import type { JudgedPart } from '../risk/index.ts';
import type { MatchWord, PolicyRule } from './document.ts';

const wordIs = (expected: MatchWord, word: string): boolean => (typeof expected === 'string' ? word === expected : expected.includes(word));

const basename = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/**
 * True when the part is a simple command whose words start with the rule's words. A rule that asks or refuses also
 * holds for the program named by a path (`/usr/bin/systemctl` for `systemctl`): matching more only makes it
 * stricter. An allow rule holds only for the words as written, so `./systemctl` is never the `systemctl` it allows.
 */
export function ruleMatches(rule: Pick<PolicyRule, 'match' | 'decision'>, part: Pick<JudgedPart, 'argv'>): boolean {
  const { argv } = part;
  if (argv === null || argv.length < rule.match.length) return false;
  return rule.match.every((expected, i) => {
    const word = argv[i];
    if (word === null || word === undefined) return false;
    if (wordIs(expected, word)) return true;
    return i === 0 && rule.decision !== 'allow' && word.includes('/') && wordIs(expected, basename(word));
  });
}
