// The thread that runs PGlite for src/adapters/db/pglite.ts: PostgreSQL's WebAssembly runs here, beside the
// server's event loop instead of on it. Plain JavaScript, so the same file runs from src/ (tsx, tests) and from
// the bundle in dist/. Requests arrive as { id, op, ... } and each gets one answer { id, rows } or { id, error };
// NOTIFYs of a listened channel go out as { notify, payload }.
import { parentPort, workerData } from 'node:worker_threads';
import { setFlagsFromString } from 'node:v8';
import { PGlite } from '@electric-sql/pglite';

// WebAssembly compiled by Liftoff, V8's baseline compiler, only: optimising PostgreSQL's code in the background took
// both cores of a small machine for seconds after start and stalled the thread for a quarter of a second when it
// finished, for queries a few percent faster after that. It is read when a module is compiled.
setFlagsFromString('--liftoff-only');

/** @type {{ dataDir: string | undefined, startParams: string[] }} */
const { dataDir, startParams } = workerData;
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const options = { startParams: [...PGlite.defaultStartParams, ...startParams] };
const pg = dataDir === undefined ? new PGlite(options) : new PGlite(dataDir, options);
const parsers = { [20]: (/** @type {string} */ v) => Number(v) }; // INT8 as number, as in the postgres adapter

/** Open transactions by id: the queryable PGlite gave, and how to end it. */
const open = new Map();
/** Listened channels by name: how to stop. */
const listening = new Map();
let nextTx = 1;

/**
 * An error as plain data: a DatabaseError's fields (code, detail, constraint, …) survive the crossing; its query
 * options (functions) and parameters stay behind.
 */
function plain(error) {
  if (!(error instanceof Error)) return { message: String(error) };
  const fields = Object.entries(error).filter(([key, value]) => key !== 'params' && ['string', 'number', 'boolean'].includes(typeof value));
  return { ...Object.fromEntries(fields), name: error.name, message: error.message, stack: error.stack };
}

class RolledBack extends Error {}

/** Opens a transaction that stays open, holding the connection, until its 'end' arrives. */
function begin() {
  const tx = nextTx++;
  return new Promise((answer, fail) => {
    const entry = {};
    entry.done = pg.transaction(
      (t) =>
        new Promise((resolve, reject) => {
          Object.assign(entry, { t, resolve, reject });
          open.set(tx, entry);
          answer(tx);
        }),
    );
    // A BEGIN refused fails the 'begin'; after that, the outcome is the answer to the 'end'.
    entry.done.catch((error) => (open.has(tx) || entry.t ? undefined : fail(error)));
  });
}

async function end(tx, commit) {
  const entry = open.get(tx);
  if (!entry) throw new Error(`no open transaction ${tx}`);
  open.delete(tx);
  if (commit) entry.resolve();
  else entry.reject(new RolledBack());
  try {
    await entry.done;
  } catch (error) {
    if (!(error instanceof RolledBack)) throw error;
  }
}

const on = (tx) => (tx === undefined ? pg : open.get(tx)?.t);

async function handle(message) {
  switch (message.op) {
    case 'query': {
      const target = on(message.tx);
      if (!target) throw new Error(`no open transaction ${message.tx}`);
      return { rows: (await target.query(message.sql, message.params, { parsers })).rows };
    }
    case 'exec': {
      const target = on(message.tx);
      if (!target) throw new Error(`no open transaction ${message.tx}`);
      await target.exec(message.sql);
      return {};
    }
    case 'begin':
      return { tx: await begin() };
    case 'end':
      await end(message.tx, message.commit);
      return {};
    case 'listen': {
      if (!listening.has(message.channel)) {
        listening.set(message.channel, await pg.listen(message.channel, (payload) => port.postMessage({ notify: message.channel, payload })));
      }
      return {};
    }
    case 'unlisten': {
      const stop = listening.get(message.channel);
      listening.delete(message.channel);
      await stop?.();
      return {};
    }
    case 'close':
      await pg.close();
      return {};
    default:
      throw new Error(`unknown request ${String(message.op)}`);
  }
}

port.on('message', (message) => {
  handle(message).then(
    (answer) => port.postMessage({ id: message.id, ...answer }),
    (error) => port.postMessage({ id: message.id, error: plain(error) }),
  );
});

pg.waitReady.then(
  () => port.postMessage({ ready: true }),
  (error) => port.postMessage({ ready: false, error: plain(error) }),
);
