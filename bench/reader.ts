// The write path's reader as a client of its own (bench/commands.ts): GET PATH (by default /sessions?limit=50),
// one request after another, from a process of its own, so that its figures hold the server's time and not the
// event loop of the bench process that runs the 32 writers. Prints "ready" once its first request is answered,
// reads until a line arrives on standard input, then prints its latencies (ms) as JSON and exits.
import { createInterface } from 'node:readline';
import { ok } from './commands.ts';

const base = process.argv[2];
const path = process.argv[3] ?? '/sessions?limit=50';
if (base === undefined) throw new Error('usage: node --import tsx bench/reader.ts BASE_URL [PATH]');
let reading = true;
createInterface({ input: process.stdin }).once('line', () => (reading = false));
const latencies: number[] = [];
await ok(base, 'GET', path);
console.log('ready');
while (reading) {
  const started = performance.now();
  await ok(base, 'GET', path);
  latencies.push(performance.now() - started);
}
console.log(JSON.stringify(latencies));
process.exit(0);
