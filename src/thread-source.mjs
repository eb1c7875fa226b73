// Starts a worker thread's TypeScript entry from source (tests, tsx, a build older than src/) through tsx, as
// bin/nomos.mjs does for the main thread: the classifier's (src/adapters/classifier-pool.ts) and the log's leaf
// hashers (src/log/leaf-pool.ts). The bundle runs their entries from dist/ instead.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(/** @type {{ entry: string }} */ (workerData).entry);
