// RFC 8785 (JSON Canonicalization Scheme) serialization: the bytes a leaf is made of (docs/verifiable-log.md).
// The `canonicalize` package is the reference this is checked against, value for value, on a generated corpus
// and on the RFC's own examples (test/log/canonical-json.test.ts). This one is the hot path of sealing and of
// `nomos verify` (every event, twice): the package walks every string char by char in JavaScript to refuse a lone
// surrogate and builds an array and a Set per object; here a string with nothing to escape is written as it is, any
// other by JSON.stringify after String.prototype.isWellFormed refuses a lone surrogate, keys are quoted once, and
// the text is built in one pass (bench/results.md and bench/profile-notes.md have what each step changed).
// Strings and numbers are written as JSON.stringify writes them, exactly as RFC 8785 (section 3.2.2) prescribes;
// object keys sorted by UTF-16 code units, which is what Array.prototype.sort compares.

/**
 * The value as RFC 8785 canonical JSON. Throws on what I-JSON cannot hold: NaN, ±Infinity, a lone surrogate, a
 * bigint; a cycle overflows the stack (a RangeError) where the package names it: values here come from JSON.parse.
 */
export function canonicalJson(value: unknown): string {
  const text = serialize(value);
  if (text === undefined) throw new TypeError('not JSON: nothing to canonicalize');
  return text;
}

/** A string that needs no escape and holds no surrogate: written between quotes as it is, no JSON.stringify call. */
// eslint-disable-next-line no-control-regex -- the control characters are what JSON must escape
const PLAIN = /^[^\u0000-\u001f"\\\ud800-\udfff]*$/;

function quote(text: string): string {
  if (PLAIN.test(text)) return `"${text}"`;
  if (!(text as string & { isWellFormed(): boolean }).isWellFormed()) throw new Error('Lone surrogate is not allowed');
  return JSON.stringify(text);
}

/** Object keys as written, quoted once: a log's events repeat a few hundred keys. Bounded, for a log that does not. */
const quotedKeys = new Map<string, string>();
function quoteKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = quote(key);
    if (quotedKeys.size < 4_096) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/** undefined for what JSON leaves out (undefined, a function, a symbol), as JSON.stringify does. */
function serialize(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      if (!Number.isFinite(value)) throw new Error(Number.isNaN(value) ? 'NaN is not allowed' : 'Infinity is not allowed');
      return `${value}`; // Number::toString, which JSON.stringify writes a finite number as
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    case 'bigint':
      throw new TypeError('a bigint is not JSON');
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return serialize((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += serialize(value[i]) ?? 'null';
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length > 1) keys.sort();
  let out = '{';
  for (const key of keys) {
    const member = serialize(record[key]);
    if (member === undefined) continue;
    if (out.length > 1) out += ',';
    out += `${quoteKey(key)}:${member}`;
  }
  return `${out}}`;
}
