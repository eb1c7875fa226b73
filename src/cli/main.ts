// The `nomos` command line: serve, migrate, projection maintenance, the fleet, chat, audit, MCP and the classifier.
// Thin: each verb wires existing parts, and loads them only when it runs.
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { DEFAULT_REBUILD_BATCH_SIZE } from '../projections/rebuild-defaults.ts';
import { CLASSIFY_EXIT, DEFAULT_CONTINUATION_WAIT_S, DEFAULT_URL, PROJECTION_NAMES } from './catalog.ts';
import { shipped } from '../paths.ts';
import { FLEET_FILE_FORMAT } from './fleet-format.ts';

const { version } = JSON.parse(readFileSync(shipped('package.json'), 'utf8')) as { version: string };

const program = new Command('nomos').description('Nomos: an event-sourced backend for a resident operations agent').version(version).showHelpAfterError();

// Each verb loads its code when it runs, so that help, the version and the light verbs start at once.
program
  .command('serve')
  .description('start the HTTP API and the projectors (embedded PGlite in NOMOS_DATA_DIR unless DATABASE_URL is set)')
  .action(async () => {
    const [{ serve }, { loadConfig }] = await Promise.all([import('./serve.ts'), import('../config.ts')]);
    await serve(loadConfig());
  });

program
  .command('migrate')
  .description('apply the SQL migrations in migrations/ (safe to run twice)')
  .action(async () => {
    const [{ loadConfig }, { claimDataDir }, { openDb }, { migrate }] = await Promise.all([import('../config.ts'), import('./data-dir-lock.ts'), import('../adapters/db/open.ts'), import('../adapters/db/migrate.ts')]);
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

function threadsOption(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 64) throw new InvalidArgumentError('a whole number of threads from 0 to 64');
  return Number(value);
}

const projections = program.command('projections').description('inspect and rebuild the read models');
projections
  .command('rebuild')
  .argument('[name]', `one projection (${PROJECTION_NAMES.join(', ')}); all when omitted`)
  .option('--restart', 'discard a rebuild left unfinished and start again from the first event (by default it is resumed)')
  .option('--batch-size <events>', `events applied per transaction (default ${DEFAULT_REBUILD_BATCH_SIZE}; smaller commits progress more often)`, batchSizeOption)
  .description('replay every event into shadow tables while the live ones keep answering, then swap them in')
  .action(async (name: string | undefined, options: { restart?: boolean; batchSize?: number }) => {
    const [{ rebuildCommand }, { loadConfig }] = await Promise.all([import('./projections.ts'), import('../config.ts')]);
    await rebuildCommand(loadConfig(), name, { restart: options.restart === true, ...(options.batchSize !== undefined && { batchSize: options.batchSize }) });
  });
projections
  .command('status')
  .description("each projection's version, position and lag")
  .action(async () => {
    const [{ statusCommand }, { loadConfig }] = await Promise.all([import('./projections.ts'), import('../config.ts')]);
    await statusCommand(loadConfig());
  });

const fleet = program.command('fleet').description('the fleet inventory, through a running server (NOMOS_URL, NOMOS_TOKEN)');
fleet
  .command('import')
  .argument('<file>', 'inventory as YAML or JSON: `entities:` with a list of entities, or a bare list (see below)')
  .description(`register the hosts, containers and VMs in FILE with the server at NOMOS_URL (default ${DEFAULT_URL})`)
  .addHelpText('after', `\nThe file (YAML; JSON of the same shape):\n\n${FLEET_FILE_FORMAT}\n`)
  .action(async (file: string) => {
    const { importInventory } = await import('./fleet.ts');
    for (const line of await importInventory(file, process.env)) console.log(line);
  });
fleet
  .command('list')
  .option('--all', 'retired entities too')
  .option('--json', "the server's JSON: each entity with its health and retirement")
  .description('the fleet: slug, kind, target, status, reachability and last contact of each entity')
  .action(async (options: { all?: boolean; json?: boolean }) => console.log(await (await import('./fleet.ts')).listFleet(options, process.env)));
fleet
  .command('retire')
  .argument('<slug>', 'the entity, such as host:old-nas')
  .option('--reason <text>', 'why, recorded in the event')
  .description('take an entity out of the fleet (operators): kept in history, off the default lists, no command runs on it')
  .action(async (slug: string, options: { reason?: string }) => console.log(await (await import('./fleet.ts')).retireFleetEntity(slug, options.reason, process.env)));

const policy = program.command('policy').description("the operator's policy, through a running server (NOMOS_URL, NOMOS_TOKEN)");
policy
  .command('apply')
  .argument('<file>', 'the policy as YAML or JSON: {rules: [{id, match, targets?, decision, justification, examples?}]}')
  .description('switch the policy in FILE on (operators only); a document with problems prints each and changes nothing')
  .action(async (file: string) => console.log(await (await import('./policy.ts')).applyPolicyFile(file, process.env)));
policy
  .command('check')
  .argument('<command>', 'a shell command, quoted as one argument')
  .requiredOption('--target <slug>', 'the entity it would run on, such as lxc:rclone')
  .description('print what the policy decides for COMMAND on the target (JSON); the exit status says it too: 0 allow, 3 ask, 4 deny')
  .action(async (command: string, options: { target: string }) => {
    const { text, exitCode } = await (await import('./policy.ts')).checkPolicy(command, options.target, process.env);
    console.log(text);
    process.exitCode = exitCode;
  });
policy
  .command('what-if')
  .argument('<file>', 'a candidate policy as YAML or JSON, as apply takes it')
  .description('print (JSON) what the policy in FILE would change over every command ever requested: counts per change, the newest of each, and the newly allowed that were once denied or failed (operators and auditors)')
  .action(async (file: string) => console.log(await (await import('./policy-what-if.ts')).whatIfFile(file, process.env)));
policy
  .command('suggest')
  .option('--min-approvals <n>', 'approvals a command needs at least (default 3)')
  .description('print (JSON) the allow rules the approvals in the log suggest, each with its evidence and what-if (operators and auditors)')
  .action(async (options: { minApprovals?: string }) => console.log(await (await import('./policy-suggest.ts')).suggestPolicy(options.minApprovals, process.env)));

function secondsOption(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n > 3_600) throw new InvalidArgumentError('a number of seconds from 0 to 3600');
  return n;
}

/** Ctrl-C ends `work` (its signal aborts) rather than the process, which then exits as it would have; a second one exits at once. */
async function untilInterrupted(work: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const controller = new AbortController();
  const stop = () => (controller.signal.aborted ? process.exit(130) : controller.abort());
  process.on('SIGINT', stop);
  try {
    await work(controller.signal);
  } finally {
    process.off('SIGINT', stop);
  }
}

const approvals = program.command('approvals').description('the approvals queue, through a running server (NOMOS_URL, NOMOS_TOKEN); deciding is for operators');
approvals
  .command('list')
  .option('--json', 'print the server\'s answer as JSON: {approvals, as_of_position}')
  .description('the pending approvals, oldest first: id, session, command, target, risk class, rule (rule_id/policy version), reason, time left')
  .action(async (options: { json?: boolean }) => {
    for (const line of await (await import('./approvals.ts')).listCommand(options, process.env)) console.log(line);
  });
approvals
  .command('approve')
  .argument('<id>', 'the approval id (nomos approvals list shows it)')
  .description('approve: the command runs once; prints how it ended, following it while it runs (Ctrl-C stops following, not the command)')
  .action(async (id: string) => {
    const { approveCommand } = await import('./approvals.ts');
    await untilInterrupted((signal) => approveCommand(id, process.env, (text) => void process.stdout.write(text), signal));
  });
approvals
  .command('deny')
  .argument('<id>', 'the approval id (nomos approvals list shows it)')
  .requiredOption('--reason <text>', 'why, recorded with the denial and told to the agent')
  .description('deny: nothing runs, and the reason is recorded')
  .action(async (id: string, options: { reason: string }) => console.log(await (await import('./approvals.ts')).denyCommand(id, options.reason, process.env)));
approvals
  .command('watch')
  .description('a line for each pending approval, those waiting first, then each new one as it is asked, until Ctrl-C')
  .action(async () => {
    const { watchCommand } = await import('./approvals.ts');
    await untilInterrupted((signal) => watchCommand(process.env, (text) => void process.stdout.write(text), (text) => void process.stderr.write(text), signal));
  });

program
  .command('chat')
  .description('chat with the agent in the terminal (server at NOMOS_URL, token NOMOS_TOKEN)')
  .option('--session <id>', 'continue this session (its last messages are shown first)')
  .option('--continuation-wait <seconds>', 'after an approval or a denial, how long to wait for the agent to carry on', secondsOption, DEFAULT_CONTINUATION_WAIT_S)
  .action(async (options: { session?: string; continuationWait: number }) => (await import('./chat.ts')).chatAction(options));

program
  .command('audit')
  .description(`session-review report from the server at NOMOS_URL (default ${DEFAULT_URL}, with NOMOS_TOKEN): each session, then a summary`)
  .option('--since <when>', 'sessions active since: a duration (90m, 24h, 7d) or an RFC 3339 time', '7d')
  .option('--outcome <outcome>', 'only sessions that ended success, partial or failed')
  .option('--blocker <blocker>', 'only sessions with this blocker')
  .option('--include-deleted', 'deleted sessions too (operators and auditors)')
  .option('--json', 'print the report as JSON: {sessions, summary, as_of_position}')
  .action(async (options: { since: string; outcome?: string; blocker?: string; includeDeleted?: boolean; json?: boolean }) => (await import('./audit.ts')).auditAction(options));

program
  .command('mcp')
  .description(`serve MCP on stdin/stdout for an agent that starts its tools as a process, through the server at NOMOS_URL (default ${DEFAULT_URL}) with NOMOS_TOKEN`)
  .option('--name <name>', 'the client name the server is told at the handshake, instead of the one the agent gives; with auth off the calls are recorded as agent:<name>')
  .action(async (options: { name?: string }) => (await import('./mcp.ts')).bridgeStdio(process.env, options.name === undefined ? {} : { name: options.name }));

const verify = program
  .command('verify')
  .option('--dir <dir>', 'verify an export (nomos log export) offline instead of the database')
  .option('--key <pem>', 'a public key you trust (PEM) to check the signatures with, instead of the log\'s own')
  .option('--no-read-models', 'the log only: do not fold the read models again')
  .option('--json', 'the findings as JSON')
  .option('--threads <n>', 'threads hashing the leaves beside the reads (default: the cores but one, from 1 up to 4; 0 hashes on the reading thread)', threadsOption)
  .description('check the verifiable log: every event against its sealed leaf, every checkpoint\'s root and signature, then every read model folded again and compared; exit 0 verified, 2 the log was changed, 3 a read model is not its fold, 1 cannot verify')
  .action(async (options: { dir?: string; key?: string; readModels: boolean; json?: boolean; threads?: number }) => {
    const { verifyOffline, verifyOnline } = await import('./verify.ts');
    const settings = { ...(options.key !== undefined && { key: options.key }), readModels: options.readModels, ...(options.json && { json: true }), ...(options.threads !== undefined && { threads: options.threads }) };
    const outcome = options.dir !== undefined ? await verifyOffline(options.dir, settings) : await verifyOnline((await import('../config.ts')).loadConfig(), settings);
    for (const line of outcome.lines) console.log(line);
    process.exitCode = outcome.exitCode;
  });
verify
  .command('receipt')
  .argument('<file>', 'a receipt (GET /approvals/:id/receipt or /executions/:id/receipt)')
  .option('--key <pem>', 'a public key you trust (PEM), instead of the one in the receipt')
  .option('--json', 'the checks as JSON')
  .description('check a receipt offline: its checkpoint\'s signature, every entry\'s inclusion proof, its data and summary; exit 0 verified, 2 a check failed, 1 not a receipt')
  .action(async (file: string, options: { key?: string; json?: boolean }) => {
    const { verifyReceiptCommand } = await import('./verify-receipt.ts');
    const outcome = await verifyReceiptCommand(file, { ...(options.key !== undefined && { key: options.key }), ...(options.json && { json: true }) });
    for (const line of outcome.lines) console.log(line);
    process.exitCode = outcome.exitCode;
  });
program
  .command('log')
  .description('the verifiable log')
  .command('export')
  .argument('<dir>', 'where to write leaves.jsonl, checkpoints/ and public-key.pem')
  .description('export the log for an offline check (nomos verify --dir DIR): each leaf as JSON lines, each checkpoint as signed, the public key')
  .action(async (dir: string) => {
    const [{ exportLog }, { loadConfig }] = await Promise.all([import('./verify.ts'), import('../config.ts')]);
    for (const line of await exportLog(loadConfig(), dir)) console.log(line);
  });

program
  .command('keygen')
  .argument('<file>', 'where to write the key (refused if it exists)')
  .option('--origin <origin>', 'the log origin the key will sign under (NOMOS_LOG_ORIGIN), for the verifier key printed')
  .description("write a new Ed25519 signing key for the verifiable log (NOMOS_SIGNING_KEY; PEM PKCS#8, mode 0600) and print its public key and verifier key")
  .action(async (file: string, options: { origin?: string }) => {
    for (const line of await (await import('./keygen.ts')).keygen(file, options.origin)) console.log(line);
  });

program
  .command('classify')
  .argument('<command>', 'a shell command, quoted as one argument')
  .description(`print the risk verdict run would apply to COMMAND (JSON); the exit status says it too: ${Object.entries(CLASSIFY_EXIT).map(([verdict, code]) => `${code} ${verdict}`).join(', ')}`)
  .action(async (command: string) => {
    const { classify } = await import('../domain/risk/index.ts');
    const verdict = classify(command);
    console.log(JSON.stringify(verdict, null, 2));
    process.exitCode = CLASSIFY_EXIT[verdict.risk_class];
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(`nomos: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
