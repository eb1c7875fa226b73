// A terminal a person would type into: `nomos ARGS` on the slave side of a real pseudo-terminal (util-linux
// `script`), what it drew readable as a screen, and keystrokes typed into it.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

const SCRIPT = '/usr/bin/script';

export interface Terminal {
  type(text: string): void;
  screen(): string;
  /** Waits until the screen (from `from` on) matches; fails with the screen if it never does. Returns where it matched. */
  waitFor(pattern: RegExp, from?: number, ms?: number): Promise<number>;
  exited: Promise<number | null>;
  child: ChildProcessWithoutNullStreams;
}

const terminals = new Set<Terminal>();

export function openTerminal(args: readonly string[], env: Record<string, string>): Terminal {
  const command = [process.execPath, 'bin/nomos.mjs', ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn(SCRIPT, ['-qfec', command, '/dev/null'], { env: { ...process.env, ...env, TERM: 'xterm' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let raw = '';
  child.stdout.on('data', (b: Buffer) => (raw += b.toString()));
  child.stderr.on('data', (b: Buffer) => (raw += b.toString()));
  // What a person sees: readline's cursor moves and line clearing taken out, line ends as \n.
  // eslint-disable-next-line no-control-regex
  const screen = () => raw.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r\n?/g, '\n');
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const terminal: Terminal = {
    child,
    exited,
    screen,
    type: (text) => void child.stdin.write(text),
    async waitFor(pattern, from = 0, ms = 30_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const at = screen().slice(from).search(pattern);
        if (at >= 0) return from + at;
        if (Date.now() > deadline) throw new Error(`the screen never showed ${pattern}:\n${screen()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
  terminals.add(terminal);
  void exited.then(() => terminals.delete(terminal));
  return terminal;
}

/** Ends every terminal still open (afterEach). */
export async function closeTerminals(): Promise<void> {
  for (const t of terminals) {
    t.child.kill('SIGKILL');
    await t.exited;
  }
}
