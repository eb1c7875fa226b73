// A policy document sent as YAML: the media types read as such, and the text parsed with its problems answered
// 400 naming the line, never expanded past a bounded number of aliases.
import YAML from 'yaml';
import { HttpProblem } from './errors.ts';

export const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];

/** A YAML body, parsed; broken YAML is a 400 naming the line. */
export function policyFromYaml(text: string): unknown {
  const document = YAML.parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const error = document.errors[0];
  if (error !== undefined) {
    const where = error.linePos?.[0] ? `line ${error.linePos[0].line}, column ${error.linePos[0].col}: ` : '';
    throw new HttpProblem(400, 'invalid_yaml', `the policy is not valid YAML: ${where}${error.message.split('\n')[0] ?? ''}`);
  }
  try {
    return document.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (error) {
    // Aliases that multiply (a billion laughs) stop here, as the library refuses them.
    throw new HttpProblem(400, 'invalid_yaml', `the policy is not usable YAML: ${error instanceof Error ? error.message : String(error)}`);
  }
}
