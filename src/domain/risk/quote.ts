// Canonical shell quoting of a known word value, so that differently quoted spellings of one argv print alike.

const SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

export function quoteValue(value: string): string {
  if (SAFE.test(value)) return value;
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
