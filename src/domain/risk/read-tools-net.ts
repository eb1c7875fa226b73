// Read-only option tables for network tools: sockets, DNS, reachability, and fetching a URL with curl or wget. A
// fetch only reads when it is an http(s) GET or HEAD whose answer goes to the caller: any other scheme (file://,
// gopher://, dict://, ftp://, a URL without one, which curl guesses), a method or body, an upload, a file written or
// a config read from elsewhere is not. Left-out options are named beside each table.
import type { OptionTable, ReadOption } from './option-table.ts';
import type { Word } from './parse.ts';
import { isSink } from './sinks.ts';

const HELP = 'help version';

/** Only `http://` and `https://`, in any case; a URL only known at run time must show its scheme. */
export const isWebUrl = (text: string): boolean => /^https?:\/\//i.test(text);

function webUrls(operands: readonly Word[]): string | undefined {
  const bad = operands.find((w) => !isWebUrl(w.value ?? w.prefix));
  return bad === undefined ? undefined : `${bad.text} is not an http:// or https:// URL`;
}

const getOrHead = (method: string): boolean => ['GET', 'HEAD'].includes(method.toUpperCase());
const notFromFile = (value: string): boolean => !value.startsWith('@');

const CURL_DATA = ['-d', '--data', '--data-ascii', '--data-binary', '--data-raw', '--data-urlencode'];

/** Data options make a POST unless -G puts them in the URL. */
function curlGets(options: readonly ReadOption[]): string | undefined {
  const data = options.find((o) => CURL_DATA.includes(o.name));
  if (data === undefined || options.some((o) => o.name === '-G' || o.name === '--get')) return undefined;
  return `${data.name} without -G sends a POST`;
}

const CURL: OptionTable = {
  // Left out: -K/--config, -q's opposite, -Q/--quote, --proto*, -T/--upload-file, -F/--form, --json, -O/-J/--remote-*,
  // --output-dir, --create-dirs, -C, -x/--proxy, -z, -P, -t, --next, --variable, --expand-*, --hsts, --alt-svc,
  // --etag-*, --libcurl, --netrc-file.
  short: 'sSfLIivkG46Ngqj#H:A:e:m:o:D:w:X:d:u:r:Y:y:b:c:E:',
  long: `silent show-error fail fail-with-body fail-early location head include verbose insecure get ipv4 ipv6 no-buffer
    globoff compressed http1.0 http1.1 http2 http2-prior-knowledge no-keepalive no-progress-meter progress-bar raw
    path-as-is max-redirs= max-time= connect-timeout= retry= retry-delay= retry-max-time= retry-all-errors
    retry-connrefused header= user-agent= referer= write-out= output= dump-header= stderr= trace= trace-ascii= trace-time
    request= data= data-ascii= data-binary= data-raw= data-urlencode= user= range= cookie= cookie-jar= cacert= capath=
    cert= key= cert-type= key-type= pass= resolve= connect-to= unix-socket= abstract-unix-socket= noproxy=
    max-filesize= limit-rate= speed-limit= speed-time= url= oauth2-bearer= basic digest negotiate ntlm anyauth netrc
    netrc-optional tlsv1.2 tlsv1.3 tls-max= junk-session-cookies ${HELP}`,
  values: {
    '-X': getOrHead, '--request': getOrHead,
    '-o': isSink, '--output': isSink, '-D': isSink, '--dump-header': isSink, '-c': isSink, '--cookie-jar': isSink,
    '--stderr': isSink, '--trace': isSink, '--trace-ascii': isSink,
    '-H': notFromFile, '--header': notFromFile,
    // -w @file reads its format from a file; %output{…} switches the output to a file.
    '-w': (v) => notFromFile(v) && !v.includes('%output'), '--write-out': (v) => notFromFile(v) && !v.includes('%output'),
    '-d': notFromFile, '--data': notFromFile, '--data-ascii': notFromFile, '--data-binary': notFromFile,
    // name@file and @file send a file's contents.
    '--data-urlencode': (v) => !/^[^=]*@/.test(v),
    // Without `=` the value is a cookie file to read.
    '-b': (v) => v.includes('='), '--cookie': (v) => v.includes('='),
    '--url': isWebUrl,
  },
  operands: webUrls,
  together: curlGets,
};

/** wget saves what it fetches unless told -O - (or /dev/null) or --spider. */
function wgetToCaller(options: readonly ReadOption[]): string | undefined {
  const toCaller = options.some((o) => o.name === '--spider' || ((o.name === '-O' || o.name === '--output-document') && o.value !== undefined && isSink(o.value)));
  return toCaller ? undefined : 'wget saves what it fetches into a file without -O - or --spider';
}

const WGET: OptionTable = {
  // Left out: -r/-p/-N/-c/-x and the other recursion and saving options, -e/--execute, -i/--input-file, --config,
  // -b (writes wget-log), --post-*, --body-*, --hsts-file, -P, -B, -k, -K, -E.
  short: 'qvn:O:o:a:ST:t:U:46dhVw:Q:',
  long: `quiet verbose no-verbose output-document= output-file= append-output= spider server-response timeout=
    dns-timeout= connect-timeout= read-timeout= tries= header= user-agent= no-check-certificate max-redirect=
    inet4-only inet6-only user= password= http-user= http-password= no-proxy method= content-on-error no-cache
    compression= https-only no-dns-cache wait= waitretry= random-wait retry-connrefused retry-on-http-error= referer=
    ca-certificate= ca-directory= certificate= private-key= secure-protocol= progress= show-progress no-hsts quota= debug ${HELP}`,
  values: {
    '-n': (v) => v === 'v',
    '-O': isSink, '--output-document': isSink, '-o': isSink, '--output-file': isSink, '-a': isSink, '--append-output': isSink,
    '--method': getOrHead,
  },
  operands: webUrls,
  together: wgetToCaller,
};

/** nslookup with no host (or `-` first) is interactive: it runs the commands of its input. */
function nslookupHost(operands: readonly Word[]): string | undefined {
  const first = operands[0];
  return first === undefined || first.value === '-' ? 'without a host nslookup runs the commands of its input' : undefined;
}

const PING: OptionTable = {
  // Left out: -f (flood), -l (preload), -A (adaptive), -b (broadcast).
  short: 'c:w:W:i:s:t:I:qnvD46OaUT:M:m:p:S:Q:hV',
};

export const NET_TOOLS: Readonly<Record<string, OptionTable>> = {
  curl: CURL,
  wget: WGET,
  ss: {
    // Left out: -K/--kill (closes sockets), -D/--diag (writes a file).
    short: 'hVnrlaoempTisbEZzN:460tMSudwxf:HOA:F:',
    long: `numeric resolve all listening options extended memory processes threads info tipcinfo summary tos cgroup bpf
      events context contexts net= ipv4 ipv6 packet tcp mptcp sctp udp dccp raw unix tipc vsock xdp family= no-header
      oneline inet-sockopt query= socket= filter= ${HELP}`,
  },
  netstat: {
    short: 'rigsMvWnNepoclaFCZtuUSwx46A:hV',
    long: `route interfaces groups statistics masquerade verbose wide numeric numeric-hosts numeric-ports numeric-users
      symbolic extend programs timers continuous listening all fib cache context tcp udp udplite sctp raw unix inet
      inet6 protocol= ${HELP}`,
    everyOptionReads: true,
  },
  // dig's `+short` and `@server` read as operands.
  dig: { short: 'b:c:f:k:mp:q:t:x:y:46hiruv', everyOptionReads: true },
  host: { short: 'aACdlilnNrRsTtUvVwc:m:N:R:t:W:46', everyOptionReads: true },
  nslookup: {
    words: 'type= query= querytype= port= timeout= retry= debug nodebug d2 nod2 recurse norecurse vc novc domain= search nosearch class= defname nodefname fail nofail ignoretc noignoretc version',
    operands: nslookupHost,
  },
  ping: PING,
  ping6: PING,
  traceroute: { short: '46dFInrUITeAVM:f:g:i:m:N:p:q:s:t:w:z:P:', long: `icmp tcp udp udplite sctp back mtu ${HELP}`, everyOptionReads: true },
  tracepath: { short: 'nbl:m:p:46V', everyOptionReads: true },
};
