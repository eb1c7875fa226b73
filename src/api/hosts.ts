// Names and origins of this server, as configuration and requests give them: apart from the HTTP hook
// (./origin.ts), so that reading the configuration loads no HTTP framework.

export interface OriginPolicy {
  /** Host names, with or without a port, that may name this server besides loopback and the listen address (NOMOS_ALLOWED_HOSTS). */
  readonly allowedHosts: readonly string[];
  /** Origins besides the server's own whose pages may change state (NOMOS_ALLOWED_ORIGINS). */
  readonly allowedOrigins: readonly string[];
  /** The address or name the server was told to listen on (HOST). */
  readonly listenHost: string | null;
  /** Whether the Host header is checked: with auth off always; with auth on when allowedHosts names any. */
  readonly checkHost: boolean;
}

export interface HostName {
  readonly name: string;
  readonly port: string | null;
}

/** `name`, `name:port`, `[v6]`, `[v6]:port` or a bare IPv6 address; names compared lower-case without a final dot. */
export function parseHost(value: string): HostName | null {
  const v = value.trim().toLowerCase();
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d{1,5}))?$/.exec(v);
  if (bracketed) return { name: bracketed[1]!, port: bracketed[2] ?? null };
  if ((v.match(/:/g) ?? []).length > 1) return /^[0-9a-f:.]+$/.test(v) ? { name: v, port: null } : null;
  const plain = /^([a-z0-9._-]+?)\.?(?::(\d{1,5}))?$/.exec(v);
  return plain ? { name: plain[1]!, port: plain[2] ?? null } : null;
}

/** Names no other machine can answer to; any port, since several servers and tests share a machine. */
function isLoopback(name: string): boolean {
  return name === 'localhost' || name === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** Whether a Host header names this server under the policy. */
export function hostAllowed(header: string, policy: OriginPolicy): boolean {
  const host = parseHost(header);
  if (host === null) return false;
  if (isLoopback(host.name)) return true;
  const listen = policy.listenHost === null ? null : parseHost(policy.listenHost);
  if (listen !== null && listen.name === host.name && listen.name !== '0.0.0.0' && listen.name !== '::') return true;
  return policy.allowedHosts.some((entry) => {
    const allowed = parseHost(entry);
    return allowed !== null && allowed.name === host.name && (allowed.port === null || allowed.port === host.port);
  });
}

/** The origins a page served by this server has when reached under `host`: http and https, default ports elided. */
export function ownOrigins(host: string): string[] {
  const own: string[] = [];
  for (const scheme of ['http:', 'https:']) {
    try {
      own.push(new URL(`${scheme}//${host}`).origin);
    } catch {
      // not a host a URL can hold: no origin of ours
    }
  }
  return own;
}

export function normalOrigin(value: string): string | null {
  try {
    const url = new URL(value);
    return url.origin === 'null' ? null : url.origin;
  } catch {
    return null;
  }
}

/** Parses NOMOS_ALLOWED_ORIGINS entries into origins; an entry that is not one is a configuration error. */
export function parseAllowedOrigins(spec: string): string[] {
  return list(spec).map((entry) => {
    const origin = normalOrigin(entry);
    if (origin === null || !/^https?:$/.test(new URL(entry).protocol)) throw new Error(`NOMOS_ALLOWED_ORIGINS entry "${entry.slice(0, 80)}" must be an origin such as https://nomos.example.org`);
    return origin;
  });
}

/** Parses NOMOS_ALLOWED_HOSTS entries (host names or addresses, with or without a port). */
export function parseAllowedHosts(spec: string): string[] {
  return list(spec).map((entry) => {
    if (parseHost(entry) === null) throw new Error(`NOMOS_ALLOWED_HOSTS entry "${entry.slice(0, 80)}" must be a host name or address, optionally with :port`);
    return entry;
  });
}

const list = (spec: string) =>
  spec
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
