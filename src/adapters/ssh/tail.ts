// Bounded views of a command's output streams: only the last N bytes are ever held, however much it prints.

import { PID_MARKER } from './remote-command.ts';

export class Tail {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (chunk.length >= this.limit) {
      this.chunks = [Buffer.from(chunk.subarray(chunk.length - this.limit))];
      this.size = this.limit;
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit) {
      const first = this.chunks[0]!;
      const excess = this.size - this.limit;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
      }
    }
  }

  /** The tail as UTF-8, without the broken half of a character the cut may have left at its start. */
  text(): string {
    const bytes = Buffer.concat(this.chunks);
    let start = 0;
    while (start < bytes.length && start < 3 && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
    return bytes.subarray(start).toString('utf8');
  }
}

const MARKER_LINE = new RegExp(`^${PID_MARKER}(\\d+)$`);
/** A login script may print before the marker; past this many bytes without it, stop looking. */
const MARKER_SEARCH_LIMIT = 4096;

/**
 * Takes the stderr stream, removes the wrapper's PID line and passes everything else on. Lines a login script
 * printed before it pass through unchanged.
 */
export class PidMarkerFilter {
  private pending: Buffer = Buffer.alloc(0);
  private done = false;

  constructor(
    private readonly onPid: (pid: number) => void,
    private readonly pass: (chunk: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.done) {
      this.pass(chunk);
      return;
    }
    this.pending = Buffer.concat([this.pending, chunk]);
    let newline: number;
    while (!this.done && (newline = this.pending.indexOf(0x0a)) >= 0) {
      const line = this.pending.subarray(0, newline);
      this.pending = this.pending.subarray(newline + 1);
      const match = MARKER_LINE.exec(line.toString('latin1'));
      if (match) {
        this.done = true;
        this.onPid(Number(match[1]));
      } else {
        this.pass(Buffer.concat([line, Buffer.from('\n')]));
      }
    }
    if (this.done || this.pending.length > MARKER_SEARCH_LIMIT) this.flush();
  }

  /** Passes on whatever is held back (at the end of the stream, or once the marker is found). */
  flush(): void {
    this.done = true;
    if (this.pending.length > 0) this.pass(this.pending);
    this.pending = Buffer.alloc(0);
  }
}
