// Leaf hashes computed on worker threads, for `nomos verify`'s chain check: parsing each event's JSON, RFC 8785 and
// SHA-256 are most of its time and all of its garbage, and one thread cannot keep up with the database's pages
// (bench/results.md). Pages go to the threads in turn; answers come back in the order asked. A thread that fails
// fails the pages it holds, and the check with them: a leaf not computed is never taken for one that matched.
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { shipped } from '../paths.ts';
import type { LeafColumns } from './leaf.ts';

const MAX_THREADS = 4;

type Answer = { id: number; hashes: Uint8Array } | { id: number; error: string };

interface Pending {
  readonly resolve: (hashes: Buffer) => void;
  readonly reject: (error: Error) => void;
}

/** The bundled thread when this code runs from dist/, else the TypeScript through tsx (src/thread-source.mjs). */
function threadEntry(): { file: string; workerData?: { entry: string } } {
  if (!import.meta.url.endsWith('.ts')) return { file: shipped('dist', 'log', 'leaf-thread.js') };
  return { file: shipped('src', 'thread-source.mjs'), workerData: { entry: pathToFileURL(shipped('src', 'log', 'leaf-thread.ts')).href } };
}

/**
 * The threads to hash with by default: the cores but one, from one up to four. On two cores one thread beside the
 * reads is a fifth faster than none, though the database takes a share of the same two (bench/profile-notes.md).
 */
export const defaultLeafThreads = (): number => Math.min(MAX_THREADS, Math.max(1, availableParallelism() - 1));

export class LeafPool {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending & { readonly worker: Worker }>();
  private nextId = 0;
  /** Why the pool can no longer hash: a thread failed. */
  private broken: Error | null = null;

  constructor(size: number) {
    const entry = threadEntry();
    for (let i = 0; i < size; i++) {
      const worker = new Worker(entry.file, entry.workerData ? { workerData: entry.workerData } : {});
      worker.on('message', (answer: Answer) => this.answered(answer));
      worker.on('error', (error) => this.failed(worker, error));
      worker.on('exit', (code) => this.failed(worker, new Error(`a leaf thread exited (${code})`)));
      this.workers.push(worker);
    }
  }

  /** The leaf hashes of a page of events, 32 bytes each in order. The columns are copied to the thread, not moved. */
  hash(columns: LeafColumns): Promise<Buffer> {
    if (this.broken) return Promise.reject(this.broken);
    const id = this.nextId++;
    const worker = this.workers[id % this.workers.length]!;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, worker });
      worker.postMessage({ id, columns });
    });
  }

  async close(): Promise<void> {
    const workers = this.workers.splice(0);
    for (const job of this.pending.values()) job.reject(new Error('the leaf pool was closed'));
    this.pending.clear();
    await Promise.all(workers.map((w) => w.terminate()));
  }

  private answered(answer: Answer): void {
    const job = this.pending.get(answer.id);
    if (!job) return;
    this.pending.delete(answer.id);
    if ('error' in answer) job.reject(new Error(`a leaf thread could not hash a page: ${answer.error}`));
    else job.resolve(Buffer.from(answer.hashes.buffer, answer.hashes.byteOffset, answer.hashes.byteLength));
  }

  private failed(worker: Worker, error: Error): void {
    if (!this.workers.includes(worker)) return; // closed: its exit is expected
    this.broken ??= error;
    for (const [id, job] of this.pending) {
      if (job.worker !== worker) continue;
      this.pending.delete(id);
      job.reject(error);
    }
  }
}
