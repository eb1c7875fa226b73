// A fresh server's first model call on a long session, in a process of its own (bench/context.ts spawns it once per
// budget): the read with the event parsers not yet warm, and the fit with the token-count cache empty. The modules
// are loaded, and the connection open, before the clock starts, as a server's are by its first turn.
// `node --import tsx bench/context-cold.ts DATABASE_URL BUDGET` prints {"readMs":…,"fitMs":…}.
import { fitModelMessages } from '../src/agent/context-fit.ts';
import { toolDefinitions } from '../src/agent/tools.ts';
import { SqlEventStore } from '../src/adapters/eventstore/sql.ts';
import { postgresDb } from '../src/adapters/db/postgres.ts';
import { readSession, systemMessage } from './context-session.ts';

export interface ColdCall {
  readonly readMs: number;
  readonly fitMs: number;
}

const [url, budget] = process.argv.slice(2);
if (url === undefined || budget === undefined) throw new Error('usage: context-cold.ts DATABASE_URL BUDGET');
const db = postgresDb(url, { max: 1 });
const store = new SqlEventStore(db);
try {
  await db.query('SELECT 1');
  const [system, tools] = [await systemMessage(), toolDefinitions()];
  const began = performance.now();
  const events = await readSession(store);
  const read = performance.now();
  fitModelMessages(system, events, { tokens: Number(budget), tools });
  const cold: ColdCall = { readMs: read - began, fitMs: performance.now() - read };
  console.log(JSON.stringify(cold));
} finally {
  await store.close();
  await db.close();
}
