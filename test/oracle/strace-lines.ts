// Reads strace's text (as `strace -f -yy -X raw -s N` writes it into one file) into whole syscall records: the lines
// a process's call was split into by other processes' output (`<unfinished ...>`, `<... NAME resumed>`) joined, each
// argument kept as text, and the value pieces an oracle needs decoded: C-style strings, string arrays, and the path
// strace prints beside a file descriptor (`3</scratch/x>`, `-100</scratch>` for the working directory).

export interface SyscallRecord {
  /** Position in the trace, for ordering across processes. */
  readonly index: number;
  readonly pid: number;
  readonly name: string;
  /** The arguments as strace printed them, split at top-level commas. */
  readonly args: readonly string[];
  /** The return value's text (`0`, `-1`, `3</scratch/x>`, `?`). */
  readonly ret: string;
  /** The error name when the call failed (`EROFS`), else undefined. */
  readonly errno: string | undefined;
}

const LINE = /^(\d+)\s+(.*)$/;
const UNFINISHED = ' <unfinished ...>';
const RESUMED = /^<\.\.\. ([a-z0-9_]+) resumed>(.*)$/;

/** The trace's syscall records, in the order their calls began. Signal and exit notices are left out. */
export function syscallRecords(trace: string): SyscallRecord[] {
  const records: SyscallRecord[] = [];
  const pending = new Map<number, { text: string; index: number }>();
  let index = 0;
  for (const line of trace.split('\n')) {
    const match = LINE.exec(line);
    if (match === null) continue;
    const pid = Number(match[1]);
    const body = match[2] ?? '';
    if (body.startsWith('---') || body.startsWith('+++')) continue;
    if (body.endsWith(UNFINISHED)) {
      pending.set(pid, { text: body.slice(0, -UNFINISHED.length), index: index++ });
      continue;
    }
    const resumed = RESUMED.exec(body);
    if (resumed !== null) {
      const start = pending.get(pid);
      pending.delete(pid);
      if (start === undefined) continue;
      const record = parseCall(pid, start.index, start.text + (resumed[2] ?? ''));
      if (record !== undefined) records.push(record);
      continue;
    }
    const record = parseCall(pid, index++, body);
    if (record !== undefined) records.push(record);
  }
  // A call still unfinished when the trace ended (the process was killed inside it) is kept without a result.
  for (const [pid, start] of pending) {
    const record = parseCall(pid, start.index, `${start.text}) = ?`);
    if (record !== undefined) records.push(record);
  }
  return records.sort((a, b) => a.index - b.index);
}

function parseCall(pid: number, index: number, text: string): SyscallRecord | undefined {
  const open = text.indexOf('(');
  if (open <= 0) return undefined;
  const name = text.slice(0, open);
  if (!/^[a-z0-9_]+$/.test(name)) return undefined;
  const { args, end } = splitArgs(text, open + 1);
  const rest = text.slice(end + 1).trim();
  const result = /^=\s*(.*)$/.exec(rest);
  const ret = result?.[1]?.trim() ?? '?';
  const errno = /^-1 (E[A-Z0-9]+)/.exec(ret)?.[1];
  return { index, pid, name, args, ret, errno };
}

/** Splits the argument list starting at `from` at top-level commas; returns the args and the closing paren's index. */
function splitArgs(text: string, from: number): { args: string[]; end: number } {
  const args: string[] = [];
  let depth = 0;
  let start = from;
  let i = from;
  for (; i < text.length; i++) {
    const c = text.charAt(i);
    if (c === '"') {
      i = skipString(text, i);
      continue;
    }
    if (c === '/' && text.charAt(i + 1) === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close === -1 ? text.length : close + 1;
      continue;
    }
    if (c === '<' && /[\d]$/.test(text.slice(start, i).trimEnd())) {
      i = skipAnnotation(text, i);
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') depth--;
    else if (c === ')') {
      if (depth === 0) break;
      depth--;
    } else if (c === ',' && depth === 0) {
      args.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = text.slice(start, i).trim();
  if (last !== '' || args.length > 0) args.push(last);
  return { args, end: i };
}

/** Index of the closing quote of the string opening at `at`. */
function skipString(text: string, at: number): number {
  let i = at + 1;
  while (i < text.length && text.charAt(i) !== '"') i += text.charAt(i) === '\\' ? 2 : 1;
  return i;
}

/** Index of the `>` closing the annotation opening at `at`; annotations nest (`</dev/null<char 1:3>>`). */
function skipAnnotation(text: string, at: number): number {
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text.charAt(i);
    if (c === '\\') i++;
    else if (c === '<') depth++;
    else if (c === '>' && --depth === 0) return i;
  }
  return text.length;
}

/** Decodes strace's escapes (`\n`, `\"`, `\x41`, `\101`) into the bytes they stand for, read as UTF-8. */
export function unescape(body: string): string {
  if (!body.includes('\\')) return body;
  const bytes: number[] = [];
  const simple: Readonly<Record<string, number>> = { n: 10, t: 9, r: 13, v: 11, f: 12, a: 7, b: 8, e: 27, '\\': 92, '"': 34, "'": 39, '?': 63 };
  for (let i = 0; i < body.length; i++) {
    const c = body.charAt(i);
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = body.charAt(i + 1);
    const hex = /^x([0-9a-fA-F]{1,2})/.exec(body.slice(i + 1));
    const octal = /^[0-7]{1,3}/.exec(body.slice(i + 1));
    if (hex !== null) {
      bytes.push(parseInt(hex[1] ?? '0', 16));
      i += hex[0].length;
    } else if (octal !== null) {
      bytes.push(parseInt(octal[0], 8));
      i += octal[0].length;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The value of a string argument (`"a\"b"` → `a"b`), or undefined when it is not one (NULL, an address). */
export function stringArg(arg: string | undefined): string | undefined {
  if (arg === undefined || !arg.startsWith('"')) return undefined;
  const close = skipString(arg, 0);
  return unescape(arg.slice(1, close));
}

/** The strings of an array argument (`["sh", "-c", "ls"]`). */
export function stringArray(arg: string | undefined): string[] {
  if (arg === undefined || !arg.startsWith('[')) return [];
  const values: string[] = [];
  for (let i = 1; i < arg.length; i++) {
    if (arg.charAt(i) !== '"') continue;
    const close = skipString(arg, i);
    values.push(unescape(arg.slice(i + 1, close)));
    i = close;
  }
  return values;
}

/** The number a descriptor or result starts with (`-100</scratch>` → -100, `3</x>` → 3). */
export function leadingNumber(text: string | undefined): number | undefined {
  const match = /^(-?\d+)/.exec(text ?? '');
  return match === null ? undefined : Number(match[1]);
}

/**
 * The path strace printed beside a descriptor (`3</scratch/x>` → /scratch/x; with the working directory for
 * AT_FDCWD), or undefined for a descriptor that is no file (`pipe:[12]`, `NETLINK:[…]`) or has no annotation.
 */
export function annotatedPath(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const at = text.indexOf('<');
  if (at === -1 || !/^-?\d+$/.test(text.slice(0, at).trim())) return undefined;
  let body = '';
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charAt(i);
    if (c === '\\') {
      body += c + text.charAt(i + 1);
      i++;
    } else if (c === '<' || c === '>') break;
    else body += c;
  }
  const path = unescape(body);
  return path.startsWith('/') ? path : undefined;
}
