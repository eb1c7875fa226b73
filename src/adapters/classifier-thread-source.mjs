// Starts classifier-thread.ts from source (tests, tsx, a build older than src/): TypeScript through tsx, as
// bin/nomos.mjs does for the main thread. The bundle runs dist/adapters/classifier-thread.js instead.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(/** @type {{ entry: string }} */ (workerData).entry);
