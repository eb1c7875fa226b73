// Builds the exact command lines the executor sends over SSH. Every layer (the login shell that reads the SSH
// command line, `pct exec`, `sh -c`) receives a word quoted exactly once, so the operator's command reaches the
// innermost `sh -c` byte for byte.

/** The first line the wrapper prints on stderr; the executor strips it and keeps the PID. */
export const PID_MARKER = '__nomos_pid=';

/** POSIX single-quote escaping: the result is one shell word whose value is `value`, whatever it contains. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** Runs `command` in a fresh `sh -c`, after printing the PID that shell will have (exec keeps it) on stderr. */
function withPidMarker(launch: string): string {
  return `echo "${PID_MARKER}$$" >&2; exec ${launch}`;
}

/** Guest ids and timeouts are written into the line unquoted, so only plain integers get there. */
function plainInteger(value: number, what: string): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a ${what}: ${value}`);
  return String(value);
}

function pctExec(pveId: number, argv: string): string {
  return `pct exec ${plainInteger(pveId, 'Proxmox guest id')} -- ${argv}`;
}

function qmGuestExec(pveId: number, timeoutSeconds: number, argv: string): string {
  return `qm guest exec ${plainInteger(pveId, 'Proxmox guest id')} --timeout ${plainInteger(timeoutSeconds, 'timeout')} -- ${argv}`;
}

export type RemoteTarget =
  | { readonly kind: 'host' }
  | { readonly kind: 'lxc'; readonly pveId: number }
  | { readonly kind: 'vm'; readonly pveId: number };

/**
 * The SSH command line that runs `command`. It starts with `exec` so that the login shell sshd starts is replaced
 * rather than left waiting: a waiting bash would outlive a kill and report it as exit 137 and "Killed".
 * The PID marker comes from the shell that probes and kills can reach: on the host for host and vm targets (for a
 * vm that is the `qm` process; the guest's PID is not visible), inside the container for lxc targets (the PID is
 * in the container's namespace, and so are the probes).
 */
export function commandLine(target: RemoteTarget, command: string, options: { qmTimeoutSeconds: number }): string {
  const inner = `sh -c ${shellQuote(command)}`;
  switch (target.kind) {
    case 'host':
      return `exec sh -c ${shellQuote(withPidMarker(inner))}`;
    case 'lxc':
      return `exec ${pctExec(target.pveId, `sh -c ${shellQuote(withPidMarker(inner))}`)}`;
    case 'vm':
      return `exec sh -c ${shellQuote(withPidMarker(qmGuestExec(target.pveId, options.qmTimeoutSeconds, inner)))}`;
    default: {
      const never: never = target;
      return never;
    }
  }
}

/** Where the PID printed by the marker lives, and so where probes and kills must run. */
function inPidNamespace(target: RemoteTarget, script: string): string {
  return target.kind === 'lxc' ? pctExec(target.pveId, `sh -c ${shellQuote(script)}`) : `sh -c ${shellQuote(script)}`;
}

/**
 * Lists every process as its /proc/PID/stat line. /proc is read instead of `ps` because busybox `ps` (Alpine
 * containers) lacks `-o`, and the stat line carries pid, state and parent on any Linux.
 */
export function processTableLine(target: RemoteTarget): string {
  return inPidNamespace(target, 'cat /proc/[0-9]*/stat 2>/dev/null; exit 0');
}

/** Stops (first, so nothing forks while it dies) then kills the given PIDs. */
export function killLine(target: RemoteTarget, pids: readonly number[]): string {
  const list = pids.map((pid) => String(pid)).join(' ');
  return inPidNamespace(target, `kill -STOP ${list} 2>/dev/null; kill -KILL ${list} 2>/dev/null; exit 0`);
}

/** Best effort for a guest command `qm` stopped waiting for: kill it, and its process group when it leads one. */
export function guestKillLine(pveId: number, guestPid: number): string {
  // `kill -KILL -PGID`, not `kill -KILL -- -PGID`: dash's kill builtin refuses the `--`.
  return qmGuestExec(pveId, 10, `sh -c ${shellQuote(`kill -KILL -${guestPid} 2>/dev/null; kill -KILL ${guestPid}`)}`);
}
