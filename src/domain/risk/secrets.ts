// Well-known files whose contents are credentials. A command that prints one puts the secret in the session's log,
// which every auditor reads, so reading one needs an approval whatever tool does it.
import type { Invocation } from './args.ts';
import { named } from './args.ts';

const HOME = String.raw`(~|\$HOME|\$\{HOME\}|/root|/home/[^/]+)`;

const SECRETS: readonly RegExp[] = [
  /^\/etc\/g?shadow-?$/,
  /^\/etc\/ssh\/ssh_host_[^/]*(?<!\.pub)$/,
  // Everything in .ssh but what is public by design.
  new RegExp(String.raw`^${HOME}/\.ssh/(?!.*\.pub$)(?!known_hosts)(?!authorized_keys)[^/]+$`),
  new RegExp(String.raw`^${HOME}/\.ssh/?$`),
  new RegExp(String.raw`^${HOME}/\.(aws/credentials|aws/?$|config/gcloud(/|$)|kube/config|netrc|pgpass|git-credentials|my\.cnf|docker/config\.json|vault-token|gnupg(/|$))`),
  /^\/etc\/pve\/priv(\/|$)/,
  /^\/etc\/ssl\/private(\/|$)/,
  /^\/etc\/.*\.key$/,
  /\/privkey[^/]*\.pem$/,
  /(^|\/)\.env(\.[^/]*)?$/,
  /^\/proc\/[^/]+\/environ$/,
];

export const isSecretPath = (path: string): boolean => SECRETS.some((s) => s.test(path));

// Tools that take a secret's path without printing what is in it.
const NOT_PRINTING = ['ls', 'stat', 'test', '[', 'file', 'ssh', 'scp', 'sftp', 'chmod', 'chown', 'chgrp', 'touch', 'rm', 'shred', 'ssh-add'];

/** The paths a word may name: itself, an option's value (`--file=P`), a curl file reference (`@P`, `name=@P`). */
function pathsIn(value: string): string[] {
  const found = [value];
  const eq = value.indexOf('=');
  if (eq !== -1) found.push(value.slice(eq + 1));
  const at = value.lastIndexOf('@');
  if (at !== -1) found.push(value.slice(at + 1).split(';')[0] ?? '');
  return found;
}

/** The secret a command reads (an argument or an input redirection), or undefined. */
export function secretRead(inv: Invocation): string | undefined {
  const fromInput = inv.redirects.find((r) => (r.op === '<' || r.op === '<>') && r.target.value !== undefined && isSecretPath(r.target.value));
  if (fromInput !== undefined) return fromInput.target.text;
  if (named(...NOT_PRINTING)(inv)) return undefined;
  return inv.args.find((w) => w.value !== undefined && pathsIn(w.value).some(isSecretPath))?.text;
}
