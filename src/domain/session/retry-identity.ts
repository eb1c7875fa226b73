// What the retry cap counts as "the same command on the same target": the command that finally runs (quoting
// and spacing aside) on the place it finally runs, so wrapping it anew does not reset the count.
import type { Stmt } from 'mvdan-sh';
import { invocation } from '../risk/args.ts';
import { normaliseCommand } from '../risk/index.ts';
import { nodeType, parseAst, parseShell, type Redirect, type SimpleCommand, type Word } from '../risk/parse.ts';
import { unwrap } from '../risk/unwrap.ts';

/** Where a command was sent: a host, or one of its containers or VMs by Proxmox id. */
export interface SentTo {
  readonly kind: 'host' | 'lxc' | 'vm';
  /** The host's inventory slug (host:strong). */
  readonly host: string;
  readonly pveId: number | null;
}

/** Where a command finally runs, and as whom when a wrapper said (null: the connection's own user, or root). */
interface Place {
  /** A registered host's slug, or `ssh:<address>` for a hop to an address the inventory does not know. */
  readonly host: string;
  readonly guest: { readonly kind: 'lxc' | 'vm'; readonly id: string } | null;
  readonly user: string | null;
}

/** A command as one simple command: what a wrapper is peeled from. */
type Step = Pick<SimpleCommand, 'assigns' | 'argv' | 'redirects'>;

// Deeper wrapping than this is not a real command line; what is left is then compared as it stands.
const MAX_DEPTH = 16;

/**
 * A stable text naming the final command and its final target; the command layer hashes it. `hostsByAddress`
 * maps the SSH addresses of registered hosts to their slugs, so an ssh hop to a registered host names it.
 */
export function retryIdentity(sentTo: SentTo, command: string, hostsByAddress: ReadonlyMap<string, string> = new Map()): string {
  const start: Place = {
    host: sentTo.host,
    guest: sentTo.kind === 'host' ? null : { kind: sentTo.kind, id: String(sentTo.pveId) },
    user: null,
  };
  const step = simpleCommand(command);
  const final = step === null ? { place: start, text: normaliseCommand(command) } : peel(step, start, hostsByAddress);
  const where = final.place.guest === null ? final.place.host : `${final.place.host}/${final.place.guest.kind}/${final.place.guest.id}`;
  const as = final.place.user === null ? '' : `as ${final.place.user}\n`;
  return `${where}\n${as}${final.text}`;
}

/** Strips the wrappers one at a time, each moving the place or the user, until a command that is not one of them. */
function peel(first: Step, start: Place, hostsByAddress: ReadonlyMap<string, string>): { place: Place; text: string } {
  let step = first;
  let place = start;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const inner = innerOf(step, place, hostsByAddress);
    if (inner === null) break;
    if (inner.kind === 'script') return { place: inner.place, text: normaliseCommand(inner.source) };
    step = inner.step;
    place = inner.place;
  }
  return { place, text: render(step) };
}

type Inner =
  | { readonly kind: 'step'; readonly step: Step; readonly place: Place }
  /** A script of more than one simple command: compared as its normalised text, as it would be when sent bare. */
  | { readonly kind: 'script'; readonly source: string; readonly place: Place };

/**
 * What a wrapper runs and where, or null when the command is not a wrapper this knows, or one whose effect on
 * what runs cannot be set aside (variables assigned before it, sudo to a group, arguments after a shell's script).
 */
function innerOf(step: Step, place: Place, hostsByAddress: ReadonlyMap<string, string>): Inner | null {
  if (step.assigns.length > 0) return null;
  const inv = invocation(step.argv, step.redirects);
  const payloads = unwrap(inv);
  if (payloads?.length !== 1) return null;
  const [payload] = payloads;
  if (payload === undefined || payload.kind === 'unknown') return null;
  const into = (next: Place): Inner | null => {
    if (payload.kind === 'argv') return { kind: 'step', step: { assigns: [], argv: payload.argv, redirects: step.redirects }, place: next };
    const script = simpleCommand(payload.source);
    if (script !== null) return { kind: 'step', step: { ...script, redirects: [...script.redirects, ...step.redirects] }, place: next };
    // Output redirected around a whole script is not the same as the script sent bare.
    return step.redirects.length > 0 ? null : { kind: 'script', source: payload.source, place: next };
  };
  switch (inv.name) {
    case 'sh':
    case 'bash':
    case 'dash':
    case 'zsh':
    case 'ksh':
    case 'ash':
      // Only `-c SCRIPT` as the last word: arguments after it are the script's $0, $1…, and change what runs.
      return payload.kind === 'script' && inv.args.at(-1)?.value === payload.source ? into(place) : null;
    case 'sudo': {
      const user = sudoUser(inv.args.slice(0, inv.args.length - (payload.kind === 'argv' ? payload.argv.length : 0)));
      return user === undefined ? null : into({ ...place, user });
    }
    case 'ssh': {
      const to = sshDestination(inv.args);
      if (to === null) return null;
      return into({ host: hostsByAddress.get(to.address) ?? `ssh:${to.address}`, guest: null, user: to.user });
    }
    case 'pct':
      return guestHop(inv.args[1], 'lxc', place, into);
    case 'qm':
      return guestHop(inv.args[2], 'vm', place, into);
    default:
      return null;
  }
}

/** `pct exec ID` and `qm guest exec ID` on a host run in that guest, as root: the same place as its lxc/vm target. */
function guestHop(idWord: Word | undefined, kind: 'lxc' | 'vm', place: Place, into: (next: Place) => Inner | null): Inner | null {
  const id = idWord?.value;
  if (place.guest !== null || id === undefined || !/^\d+$/.test(id)) return null;
  return into({ host: place.host, guest: { kind, id: String(Number(id)) }, user: null });
}

const asRoot = (user: string): string | null => (user === 'root' || user === '#0' ? null : user);

/** The user sudo's options run the command as (null: root), or undefined when they do more than choose a user. */
function sudoUser(options: readonly Word[]): string | null | undefined {
  const VALUED = 'CDghpRrtTUu';
  let user: string | null = null;
  for (let i = 0; i < options.length; i++) {
    const value = options[i]?.value;
    if (value === undefined) return undefined;
    if (value === '--') break;
    if (value.startsWith('--')) {
      const [name, inline] = value.split('=', 2) as [string, string | undefined];
      if (name === '--group') return undefined;
      if (name === '--user') {
        const given = inline ?? options[++i]?.value;
        if (given === undefined) return undefined;
        user = asRoot(given);
      }
      continue;
    }
    for (let j = 1; j < value.length; j++) {
      const letter = value.charAt(j);
      if (!VALUED.includes(letter)) continue;
      const given = j + 1 < value.length ? value.slice(j + 1) : options[++i]?.value;
      if (letter === 'g') return undefined;
      if (letter === 'u') {
        if (given === undefined) return undefined;
        user = asRoot(given);
      }
      break;
    }
  }
  return user;
}

/** ssh's destination (`[user@]address`, `-l user`); null when it is only known at run time. */
function sshDestination(args: readonly Word[]): { address: string; user: string | null } | null {
  const VALUED = 'BbcDEeFIiJLlmOopQRSWw';
  let login: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const value = args[i]?.value;
    if (value === undefined) return null;
    if (value === '--') {
      i++;
      const destination = args[i]?.value;
      return destination === undefined ? null : parseDestination(destination, login);
    }
    if (!value.startsWith('-') || value === '-') return parseDestination(value, login);
    for (let j = 1; j < value.length; j++) {
      const letter = value.charAt(j);
      if (!VALUED.includes(letter)) continue;
      const given = j + 1 < value.length ? value.slice(j + 1) : args[++i]?.value;
      if (given === undefined) return null;
      if (letter === 'l') login = given;
      break;
    }
  }
  return null;
}

function parseDestination(destination: string, login: string | null): { address: string; user: string | null } {
  const at = destination.lastIndexOf('@');
  const user = at === -1 ? login : destination.slice(0, at);
  return { address: at === -1 ? destination : destination.slice(at + 1), user: user === null ? null : asRoot(user) };
}

/** The command as one simple command (no list, pipeline, compound, negation or background), or null. */
function simpleCommand(source: string): Step | null {
  const ast = parseAst(source);
  if (!ast.ok) return null;
  const [stmt, ...more] = ast.file.Stmts;
  if (stmt === undefined || more.length > 0 || stmt.Cmd === null || nodeType(stmt.Cmd) !== 'CallExpr') return null;
  // The parser's statement says whether it is negated (`! cmd`), in the background (`cmd &`) or a coprocess.
  const flags = stmt as Stmt & { Negated?: boolean; Background?: boolean; Coprocess?: boolean };
  if (flags.Negated === true || flags.Background === true || flags.Coprocess === true) return null;
  const parsed = parseShell(source);
  // The statement is walked first: substitutions inside its words come after it.
  return parsed.ok ? (parsed.commands[0] ?? null) : null;
}

/** One spelling per simple command: assignments, words, then redirections, each canonically quoted. */
function render(step: Step): string {
  const redirect = (r: Redirect) => `${r.fd ?? ''}${r.op}${r.target.text}${r.heredoc === undefined ? '' : `\n${r.heredoc.value ?? r.heredoc.text}`}`;
  return [...step.assigns.map((w) => w.text), ...step.argv.map((w) => w.text), ...step.redirects.map(redirect)].join(' ');
}
