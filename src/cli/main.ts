// The `nomos` command line: serve, migrate, and projection maintenance. Thin: each verb wires existing parts.
import { Command, InvalidArgumentError } from 'commander';
import { migrate } from '../adapters/db/migrate.ts';
import { loadConfig } from '../config.ts';
import { classify } from '../domain/risk/index.ts';
import { openDb, projections as allProjections } from '../runtime.ts';
import { auditCommand } from './audit.ts';
import { chatCommand } from './chat.ts';
import { claimDataDir } from './data-dir-lock.ts';
import { fleetCommand } from './fleet.ts';
import { mcpCommand } from './mcp.ts';
import { DEFAULT_REBUILD_BATCH_SIZE } from '../projections/projector.ts';
import { rebuildCommand, statusCommand } from './projections.ts';
import { serve } from './serve.ts';

const program = new Command('nomos').description('Nomos: an event-sourced backend for a resident operations agent').showHelpAfterError();

program
  .command('serve')
  .description('start the HTTP API and the projectors (embedded PGlite in NOMOS_DATA_DIR unless DATABASE_URL is set)')
  .action(async () => serve(loadConfig()));

program
  .command('migrate')
  .description('apply the SQL migrations in migrations/ (safe to run twice)')
  .action(async () => {
    const config = loadConfig();
    const release = config.databaseUrl ? null : await claimDataDir(config.dataDir, { create: true });
    const db = await openDb(config);
    try {
      const applied = await migrate(db);
      console.log(applied.length === 0 ? 'migrations: up to date' : `migrations applied: ${applied.join(', ')}`);
    } finally {
      await db.close();
      await release?.();
    }
  });

function batchSizeOption(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1 || n > 100_000) throw new InvalidArgumentError('a whole number of events from 1 to 100000');
  return n;
}

const projections = program.command('projections').description('inspect and rebuild the read models');
projections
  .command('rebuild')
  .argument('[name]', `one projection (${allProjections.map((p) => p.name).join(', ')}); all when omitted`)
  .option('--restart', 'discard a rebuild left unfinished and start again from the first event (by default it is resumed)')
  .option('--batch-size <events>', `events applied per transaction (default ${DEFAULT_REBUILD_BATCH_SIZE}; smaller commits progress more often)`, batchSizeOption)
  .description('replay every event into shadow tables while the live ones keep answering, then swap them in')
  .action(async (name: string | undefined, options: { restart?: boolean; batchSize?: number }) =>
    rebuildCommand(loadConfig(), name, { restart: options.restart === true, ...(options.batchSize !== undefined && { batchSize: options.batchSize }) }),
  );
projections
  .command('status')
  .description("each projection's version, position and lag")
  .action(async () => statusCommand(loadConfig()));

program.addCommand(fleetCommand());
program.addCommand(chatCommand());
program.addCommand(auditCommand());
program.addCommand(mcpCommand());

program
  .command('classify')
  .argument('<command>', 'a shell command, quoted as one argument')
  .description('print the risk verdict run would apply to COMMAND (JSON)')
  .action((command: string) => {
    console.log(JSON.stringify(classify(command), null, 2));
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(`nomos: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
