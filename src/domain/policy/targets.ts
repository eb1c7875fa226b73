// Which targets a rule holds on: a slug, or a glob over slugs where `*` stands for any run of characters.

/**
 * True when the target slug matches the pattern. Read left to right, going back only to the last `*`, so the time
 * stays proportional to the two lengths whatever the number of stars (a regular expression would backtrack).
 */
export function targetMatches(pattern: string, target: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < target.length) {
    const c = pattern.charAt(p);
    if (p < pattern.length && c !== '*' && c === target.charAt(t)) {
      p++;
      t++;
    } else if (c === '*') {
      star = p++;
      resume = t;
    } else if (star !== -1) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (pattern.charAt(p) === '*') p++;
  return p === pattern.length;
}

export const coversTarget = (targets: readonly string[], target: string): boolean => targets.some((pattern) => targetMatches(pattern, target));

/** The target a decision is made for when none is named: only the rules that hold on every target (`*`) apply. */
export const EVERY_TARGET = '*';
