// A real DNS server for tests, on a loopback UDP port: answers A and AAAA queries from a table the test fills,
// where an answer may depend on how often the name was asked (a rebinding server), and NXDOMAIN otherwise.
// Point a resolver at `server` (`127.0.0.1:port`).
import { createSocket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import * as dnsPacket from 'dns-packet';

/** Addresses (IPv4 and IPv6 mixed) for the nth A query of a name (1 for the first); null: never answer. */
export type Answers = readonly string[] | ((nth: number) => readonly string[] | null);

export interface DnsResponder {
  readonly server: string;
  /** The answers for a name, given as a URL's hostname spells it. */
  set(name: string, answers: Answers): void;
  /** How many A queries a name has had. */
  asked(name: string): number;
  close(): Promise<void>;
}

export async function startDnsResponder(): Promise<DnsResponder> {
  const table = new Map<string, Answers>();
  const counts = new Map<string, number>();
  const socket = createSocket('udp4');
  socket.on('message', (message, peer) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase();
    const entry = table.get(name);
    let addresses: readonly string[] | null = [];
    if (entry !== undefined) {
      const nth = question.type === 'A' ? (counts.get(name) ?? 0) + 1 : Math.max(1, counts.get(name) ?? 0);
      if (question.type === 'A') counts.set(name, nth);
      addresses = typeof entry === 'function' ? entry(nth) : entry;
    }
    if (addresses === null) return;
    const wanted = addresses.filter((a) => (question.type === 'AAAA' ? isIPv6(a) : question.type === 'A' && !isIPv6(a)));
    const answer = dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (entry === undefined ? 3 : 0),
      questions: [question],
      answers: wanted.map((data) => ({ type: question.type as 'A' | 'AAAA', name: question.name, ttl: 0, class: 'IN' as const, data })),
    });
    socket.send(answer, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    set: (name, answers) => table.set(name.toLowerCase().replace(/\.$/, ''), answers),
    asked: (name) => counts.get(name.toLowerCase().replace(/\.$/, '')) ?? 0,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
