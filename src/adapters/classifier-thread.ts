// The thread that classifies for src/adapters/classifier-pool.ts: the pure classifier, one command at a time.
// Requests arrive as { id, command }; each gets one answer { id, verdict } or { id, error }. It says { ready } once
// the classifier (and its parser) is loaded, so that loading is not counted against a command's time bound.
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
port.postMessage({ ready: true });
