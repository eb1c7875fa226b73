// Classifies commands on a few worker threads, off the server's event loop: a large command's parse no longer
// holds up every other request, and one that takes longer than the time bound is refused as destructive (its
// thread is ended and another started when next needed). Short commands are classified inline: a round trip to a
// thread costs more than they do. Threads start when first needed and never keep the process alive.
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { type JudgeRequest, type Judgement, judge, unjudged } from '../domain/policy/index.ts';
import type { Verdict } from '../domain/risk/index.ts';
import type { CommandClassifier } from '../ports/classifier.ts';
import { shipped } from '../paths.ts';

export interface ClassifierPoolOptions {
  /** How long one command may take on a thread before it is refused as destructive (rule too-slow). */
  readonly timeoutMs: number;
  /** Threads at most; by default the cores available, 1 to 4. */
  readonly size?: number;
  /** Commands shorter than this (UTF-8 bytes) are classified inline. */
  readonly inlineBelowBytes?: number;
  /** The threads' script, for tests of a thread that fails; by default the classifier's own. */
  readonly threadFile?: string;
}

export const DEFAULT_CLASSIFY_TIMEOUT_MS = 2_000;
export const INLINE_BELOW_BYTES = 128;
const MAX_THREADS = 4;

const shown = (command: string) => {
  const part = command.trim();
  return part.length > 200 ? `${part.slice(0, 200)}…` : part;
};

/** The verdict on a command the classifier did not finish within the bound: as too-complex, destructive. */
export function tooSlowVerdict(command: string, timeoutMs: number): Verdict {
  return { risk_class: 'destructive', reason: `${shown(command)}: too slow to classify (over ${timeoutMs} ms): what it runs is not known`, rule: 'too-slow', inner_commands: [] };
}

/** The verdict on a command whose classification failed (its thread crashed or could not start): fail closed. */
export function failedVerdict(command: string, error: string): Verdict {
  return { risk_class: 'destructive', reason: `${shown(command)}: the classifier failed on it (${error.slice(0, 200)}): what it runs is not known`, rule: 'classifier-failed', inner_commands: [] };
}

interface Job {
  readonly id: number;
  readonly request: JudgeRequest;
  readonly resolve: (judgement: Judgement) => void;
  readonly reject: (error: Error) => void;
}

interface Thread {
  readonly worker: Worker;
  ready: boolean;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

type Answer = { ready: true } | { id: number; judgement: Judgement } | { id: number; error: string };

/**
 * The thread's entry: the bundled one when this code runs from dist/ (bin/nomos.mjs runs dist/ only when it is at
 * least as new as src/), else the TypeScript through tsx.
 */
function threadEntry(): { file: string; workerData?: { entry: string } } {
  if (!import.meta.url.endsWith('.ts')) return { file: shipped('dist', 'adapters', 'classifier-thread.js') };
  return { file: shipped('src', 'thread-source.mjs'), workerData: { entry: pathToFileURL(shipped('src', 'adapters', 'classifier-thread.ts')).href } };
}

export class ClassifierPool implements CommandClassifier {
  readonly size: number;
  private readonly timeoutMs: number;
  private readonly inlineBelowBytes: number;
  private readonly threadFile: string | undefined;
  private readonly threads = new Set<Thread>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(options: ClassifierPoolOptions) {
    // A bound that is no number (NOMOS_CLASSIFY_TIMEOUT_MS=abc) would refuse every command: refused at start instead.
    if (!Number.isInteger(options.timeoutMs) || options.timeoutMs < 1) throw new Error(`the classifier's time bound must be a positive whole number of ms, got ${options.timeoutMs}`);
    this.timeoutMs = options.timeoutMs;
    this.size = options.size ?? Math.min(MAX_THREADS, Math.max(1, availableParallelism()));
    this.inlineBelowBytes = options.inlineBelowBytes ?? INLINE_BELOW_BYTES;
    this.threadFile = options.threadFile;
  }

  async classify(command: string): Promise<Verdict> {
    return (await this.judge({ command })).verdict;
  }

  judge(request: JudgeRequest): Promise<Judgement> {
    if (Buffer.byteLength(request.command) < this.inlineBelowBytes) {
      try {
        return Promise.resolve(judge(request));
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    }
    if (this.closed) return Promise.reject(new Error('the classifier pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, request, resolve, reject });
      this.dispatch();
    });
  }

  /** The threads running now (started, not yet ended). */
  get threadCount(): number {
    return this.threads.size;
  }

  /** Ends every thread; what waits is refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the classifier pool is closed'));
    const ending = [...this.threads].map((thread) => this.end(thread, new Error('the classifier pool is closed')));
    await Promise.all(ending);
  }

  /** Gives waiting jobs to idle threads, starting threads (up to size) for what is left. */
  private dispatch(): void {
    for (const thread of this.threads) {
      if (!thread.ready || thread.job !== null) continue;
      const job = this.queue.shift();
      if (job === undefined) return;
      this.give(thread, job);
    }
    // A thread still starting takes a waiting job when ready; start more only for jobs beyond those.
    let starting = [...this.threads].filter((t) => !t.ready).length;
    while (!this.closed && this.threads.size < this.size && this.queue.length > starting) {
      this.start();
      starting++;
    }
  }

  private give(thread: Thread, job: Job): void {
    thread.job = job;
    thread.timer = setTimeout(() => {
      // Ending the thread is the only way to stop a parse under way; the command is refused, not left waiting.
      job.resolve(unjudged(job.request, tooSlowVerdict(job.request.command, this.timeoutMs)));
      thread.job = null;
      void this.end(thread);
      this.dispatch();
    }, this.timeoutMs);
    thread.timer.unref();
    thread.worker.postMessage({ id: job.id, request: job.request });
  }

  private start(): void {
    const entry = this.threadFile === undefined ? threadEntry() : { file: this.threadFile };
    const worker = new Worker(entry.file, entry.workerData === undefined ? {} : { workerData: entry.workerData });
    worker.unref();
    const thread: Thread = { worker, ready: false, job: null, timer: null };
    this.threads.add(thread);
    worker.on('message', (answer: Answer) => {
      if ('ready' in answer) {
        thread.ready = true;
      } else if (thread.job?.id === answer.id) {
        const job = thread.job;
        if (thread.timer) clearTimeout(thread.timer);
        thread.job = null;
        thread.timer = null;
        // A command the classifier throws on is judged as one it cannot read: destructive, never an error answer.
        if ('judgement' in answer) job.resolve(answer.judgement);
        else job.resolve(unjudged(job.request, failedVerdict(job.request.command, answer.error)));
      }
      this.dispatch();
    });
    worker.on('error', (error) => this.lost(thread, error));
    worker.on('exit', (code) => this.lost(thread, new Error(`the classifier's thread exited (code ${code})`)));
  }

  /**
   * A thread that failed or ended on its own: its command is judged destructive (fail closed); one that never got
   * ready judges every waiting command so (a thread that cannot start would only fail again).
   */
  private lost(thread: Thread, error: Error): void {
    if (!this.threads.delete(thread)) return;
    if (thread.timer) clearTimeout(thread.timer);
    const failed = (job: Job) => job.resolve(unjudged(job.request, failedVerdict(job.request.command, error.message)));
    if (thread.job !== null) failed(thread.job);
    thread.job = null;
    if (!thread.ready) for (const job of this.queue.splice(0)) failed(job);
    this.dispatch();
  }

  private async end(thread: Thread, error?: Error): Promise<void> {
    this.threads.delete(thread);
    if (thread.timer) clearTimeout(thread.timer);
    if (error) thread.job?.reject(error);
    thread.job = null;
    await thread.worker.terminate();
  }
}
