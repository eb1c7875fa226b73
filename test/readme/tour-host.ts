// What the README's tour does to the machine it runs on, for the tests that run it (tour.test.ts and
// tour-sandbox.test.ts): its host is this machine, where it touches and chmods /tmp/nomos-tour. Two tours at
// once would share that file and one's cleanup would pull it from under the other, so they take turns.
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Started, start } from '../support/cli-process.ts';

/** The file the tour touches on its host. */
export const TOUR_FILE = '/tmp/nomos-tour';
const LOCK = join(tmpdir(), 'nomos-tour.lock');
const FLOCK = ['/usr/bin/flock', '/bin/flock'].find((path) => existsSync(path));

/**
 * Runs `script` (bash) holding the tours' lock (flock(1), released when the process ends however it ends), and
 * removes the tour's file after it, still holding the lock. Without flock it runs at once.
 */
export function startTour(script: string, env: Record<string, string>): Started {
  const body = `bash -c "$1"; status=$?; rm -f ${TOUR_FILE}; exit $status`;
  return FLOCK ? start(FLOCK, [LOCK, 'bash', '-c', body, 'tour', script], env) : start('bash', ['-c', body, 'tour', script], env);
}
