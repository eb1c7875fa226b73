// Parsing stored payloads without copying them. zod's parse builds a new value for every input (an object's
// unknown keys stripped), which on a rebuild is a second copy of every payload in the log, alive as long as its
// batch: profiled, a tenth of a one-pass rebuild's throughput. Here the input is checked first by a validator
// compiled from the same schema's JSON Schema (ajv, which only reads), and returned as it is when it already is
// exactly what zod would return; anything else (an unknown key to strip, an invalid value) goes to zod, whose
// answer, or error, is the one given. So the result is always zod's, and the copy is made only when it differs.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { z } from 'zod';

// Formats are not checked by ajv: zod writes each string format it knows as a `pattern` beside the `format`
// (an ISO datetime's pattern is the one zod itself tests), and the pattern is checked. String lengths count
// code points in both.
const ajv = new Ajv2020({ strict: true, validateFormats: false });

/**
 * A parse of `schema` that returns its input itself when zod's output would equal it. Only for schemas JSON
 * Schema can say all of: no refinements (`.refine`, `.superRefine`, which the conversion leaves out), no
 * transforms or defaults (the conversion throws on the first, and the second would make zod's output differ).
 * The caller treats the result as read-only, as it would any value shared with the input.
 */
export function inPlaceParser<S extends z.ZodType>(schema: S): (data: unknown) => z.output<S> {
  let check: ValidateFunction | null = null;
  return (data) => {
    // Compiled on first use: a process that never reads an event of a type never pays for its validator.
    check ??= ajv.compile(z.toJSONSchema(schema, { target: 'draft-2020-12' }));
    return check(data) ? (data as z.output<S>) : schema.parse(data);
  };
}
