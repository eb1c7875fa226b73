// The thread that classifies for src/adapters/classifier-pool.ts: the pure classifier, one command at a time.
// Requests arrive as { id, request } (a command, and maybe a target and policies to decide under); each gets one
// answer { id, judgement } or { id, error }. It says { ready } once the classifier (and its parser) is loaded and
// set up, so that this is not counted against a command's time bound.
import { parentPort } from 'node:worker_threads';
import { type JudgeRequest, judge } from '../domain/policy/index.ts';

const port = parentPort;
if (port === null) throw new Error('classifier-thread runs as a worker thread only');
port.on('message', (job: { id: number; request: JudgeRequest }) => {
  try {
    port.postMessage({ id: job.id, judgement: judge(job.request) });
  } catch (error) {
    port.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});
// The parser's first use sets it up: done here, so that a fresh thread's first command is not charged for it.
judge({ command: 'true' });
port.postMessage({ ready: true });
