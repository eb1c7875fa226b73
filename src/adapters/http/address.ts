// Which addresses http_get may connect to: the public internet, and what an operator opens on purpose.
// Public is an allow-list: an IPv4 address that ipaddr.js classes as plain `unicast` (everything in the IANA
// special-purpose registry is another class), an IPv6 address inside global unicast 2000::/3 likewise, and the
// IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4) judged by that IPv4 address. Every other class —
// those the library knows today, any it adds later, text it cannot parse — is refused. node:net's BlockList
// would need the registry copied here by hand and does not unwrap IPv4-compatible or NAT64 forms.
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

const KINDS: Readonly<Record<string, string>> = {
  loopback: 'a loopback address',
  unspecified: 'the unspecified address',
  private: 'a private address',
  uniqueLocal: 'a unique-local (private) address',
  linkLocal: 'a link-local address',
  deprecatedSiteLocal: 'a site-local (private) address',
  carrierGradeNat: 'a carrier-grade NAT (shared) address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved or documentation address',
  benchmarking: 'a benchmarking address',
  teredo: 'a Teredo tunnel address',
  rfc6145: 'an IPv4-translated address',
  discard: 'a discard-only address',
  rfc6052: 'a local-use NAT64 address',
};

const kindOf = (range: string): string => KINDS[range] ?? `a special-purpose address (${range})`;

/** The IPv4 address inside a form that carries one, with the form's name; null for any other IPv6 address. */
function embedded(a: ipaddr.IPv6): { form: string; v4: ipaddr.IPv4 } | null {
  const p = a.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  switch (a.range() as string) {
    case 'ipv4Mapped':
      return { form: 'an IPv4-mapped form', v4: a.toIPv4Address() };
    case 'rfc6052':
      // 64:ff9b::/96 carries the address in its last 32 bits; the local-use 64:ff9b:1::/48 may put it anywhere.
      return a.match(ipaddr.IPv6.parse('64:ff9b::'), 96) ? { form: 'a NAT64 form', v4: v4(p[6]!, p[7]!) } : null;
    case '6to4':
      return { form: 'a 6to4 form', v4: v4(p[1]!, p[2]!) };
    default:
      // ::a.b.c.d, deprecated (RFC 4291) but still connectable on some stacks; :: and ::1 are classed by the library.
      return p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7]! > 1) ? { form: 'an IPv4-compatible form', v4: v4(p[6]!, p[7]!) } : null;
  }
}

function judge(a: Address, shown: string): string | null {
  if (a.kind() === 'ipv4') {
    const range = (a as ipaddr.IPv4).range() as string;
    return range === 'unicast' ? null : `${shown} is ${kindOf(range)}`;
  }
  const v6 = a as ipaddr.IPv6;
  const inner = embedded(v6);
  if (inner) {
    const range = inner.v4.range() as string;
    const of = `${shown} is ${inner.form} of ${inner.v4.toString()}`;
    if (range !== 'unicast') return `${of}, ${kindOf(range)}`;
    return inner.form === 'an IPv4-compatible form' ? `${of} (a deprecated form http_get does not connect to)` : null;
  }
  const range = v6.range() as string;
  if (range !== 'unicast') return `${shown} is ${kindOf(range)}`;
  return v6.match(ipaddr.IPv6.parse('2000::'), 3) ? null : `${shown} is outside global unicast (2000::/3)`;
}

/** Why an address (as a URL or a resolver gives it) is not on the public internet, or null when it is. */
export function whyNotPublic(address: string): string | null {
  let parsed: Address;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return `${address} is not an address http_get can judge`;
  }
  return judge(parsed, address);
}

/** What NOMOS_HTTP_GET_ALLOW opens: host names (exactly, not their subdomains) and address ranges. */
export interface AllowList {
  readonly names: ReadonlySet<string>;
  readonly ranges: readonly (readonly [Address, number])[];
}

export const NOTHING_ALLOWED: AllowList = { names: new Set(), ranges: [] };

/** A host name as URLs spell it (lowercase, IDN in ASCII) and without a trailing dot, which names the same host. */
export const canonicalName = (hostname: string): string => hostname.replace(/\.$/, '');

/**
 * Reads `host,host,cidr,…`. Each entry is read by the same URL parser the fetched URLs go through, so an entry
 * means what a URL with that host would (`Wiki.LAN.` is `wiki.lan`; `10.1` is 10.0.0.1); an address without a
 * prefix length is that one address. Anything else stops the start, naming the entry.
 */
export function parseAllowList(text: string): AllowList {
  const names = new Set<string>();
  const ranges: (readonly [Address, number])[] = [];
  for (const raw of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const slash = raw.lastIndexOf('/');
    const [hostPart, bitsPart] = slash === -1 ? [raw, null] : [raw.slice(0, slash), raw.slice(slash + 1)];
    const host = hostOf(hostPart);
    const literal = host === null ? null : ipLiteral(host);
    if (host === null || (bitsPart !== null && (literal === null || !/^\d{1,3}$/.test(bitsPart)))) {
      throw new Error(`NOMOS_HTTP_GET_ALLOW: "${raw}" is neither a host name nor an address range (like 10.0.0.0/8 or fd00::/8)`);
    }
    if (literal === null) {
      names.add(canonicalName(host));
      continue;
    }
    const address = ipaddr.parse(literal);
    const bits = bitsPart === null ? (address.kind() === 'ipv4' ? 32 : 128) : Number(bitsPart);
    if (bits > (address.kind() === 'ipv4' ? 32 : 128)) throw new Error(`NOMOS_HTTP_GET_ALLOW: "${raw}" has a prefix longer than the address`);
    ranges.push([address, bits]);
  }
  return { names, ranges };
}

function hostOf(text: string): string | null {
  if (/[/?#@\\\s]/.test(text) || text === '') return null;
  try {
    return new URL(`http://${text.includes(':') && !text.startsWith('[') ? `[${text}]` : text}/`).hostname;
  } catch {
    return null;
  }
}

/** The address in a URL's hostname (brackets removed), or null for a name. */
export function ipLiteral(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) && (bare.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(bare)) ? bare : null;
}

export function allowsName(list: AllowList, hostname: string): boolean {
  return list.names.has(canonicalName(hostname));
}

/** Whether an address lies in an opened range; an IPv4-mapped address matches the IPv4 ranges too. */
export function allowsAddress(list: AllowList, address: string): boolean {
  if (list.ranges.length === 0 || !ipaddr.isValid(address)) return false;
  const forms: Address[] = [ipaddr.parse(address)];
  const first = forms[0]!;
  if (first.kind() === 'ipv6' && (first as ipaddr.IPv6).isIPv4MappedAddress()) forms.push((first as ipaddr.IPv6).toIPv4Address());
  return list.ranges.some(([base, bits]) => forms.some((a) => a.kind() === base.kind() && a.match(base, bits)));
}
