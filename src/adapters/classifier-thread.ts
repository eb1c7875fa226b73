// The thread that classifies for src/adapters/classifier-pool.ts: the pure classifier, one command at a time.
// Requests arrive as { id, command }; each gets one answer { id, verdict } or { id, error }. It says { ready } once
// the classifier (and its parser) is loaded and set up, so that this is not counted against a command's time bound.
import { parentPort } from 'node:worker_threads';
import { classify } from '../domain/risk/index.ts';

const port = parentPort;
if (port === null) throw new Error('classifier-thread runs as a worker thread only');
port.on('message', (job: { id: number; command: string }) => {
  try {
    port.postMessage({ id: job.id, verdict: classify(job.command) });
  } catch (error) {
    port.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});
// The parser's first use sets it up: done here, so that a fresh thread's first command is not charged for it.
classify('true');
port.postMessage({ ready: true });
