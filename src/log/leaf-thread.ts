// A thread of src/log/leaf-pool.ts: hashes pages of raw events into their leaf hashes. Each request { id, columns }
// gets one answer, { id, hashes } (the page's hashes in one transferred buffer) or { id, error }.
import { parentPort } from 'node:worker_threads';
import { type LeafColumns, columnLeafHashes } from './leaf.ts';

const port = parentPort;
if (port === null) throw new Error('leaf-thread runs as a worker thread only');
port.on('message', (job: { id: number; columns: LeafColumns }) => {
  try {
    const hashes = columnLeafHashes(job.columns);
    // A buffer of its own (not a slice of Node's pool), so that it can be handed over rather than copied.
    const owned = new Uint8Array(hashes.length);
    owned.set(hashes);
    port.postMessage({ id: job.id, hashes: owned }, [owned.buffer]);
  } catch (error) {
    port.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});
