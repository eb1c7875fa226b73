// Host name to every address it has, before anything connects: the system resolver (getaddrinfo, so
// /etc/hosts and nsswitch count as they do for everything else on the host), or DNS servers named on purpose.
import { promises as dns } from 'node:dns';

/** Every address (IPv4 and IPv6) a name resolves to; rejects when it has none or the signal ends the wait. */
export type Resolve = (hostname: string, signal: AbortSignal) => Promise<string[]>;

export function systemResolver(): Resolve {
  return async (hostname, signal) => {
    const found = await untilAborted(dns.lookup(hostname, { all: true, verbatim: true }), signal, () => {});
    return found.map((a) => a.address);
  };
}

/** Asks these servers (`ip` or `ip:port`) for A and AAAA records, and nothing else (no hosts file, no search list). */
export function serversResolver(servers: readonly string[]): Resolve {
  return async (hostname, signal) => {
    const resolver = new dns.Resolver({ timeout: 2_000, tries: 2 });
    resolver.setServers([...servers]);
    const name = hostname.replace(/\.$/, '');
    const answers = await untilAborted(Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]), signal, () => resolver.cancel());
    const addresses = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
    if (addresses.length > 0) return addresses;
    const failed = answers.find((a): a is PromiseRejectedResult => a.status === 'rejected');
    throw failed ? (failed.reason as Error) : Object.assign(new Error(`${hostname} has no address`), { code: 'ENODATA' });
  };
}

function untilAborted<T>(work: Promise<T>, signal: AbortSignal, cancel: () => void): Promise<T> {
  if (signal.aborted) {
    cancel();
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      cancel();
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
