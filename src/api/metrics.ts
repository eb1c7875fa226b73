// GET /metrics in the Prometheus text format: the event log's head, refused commands by rule, executions by
// status, pending approvals, each projection's position and lag, this process's live batches committed in one
// round trip and the tries that missed, and its pauses (its event loop's delay since the previous scrape, its
// garbage collections). Gauges are read when scraped.
import fp from 'fastify-plugin';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { executionCounts, ExecutionStatus, pendingApprovalCount } from '../projections/executions.ts';
import { projectionStatus } from '../projections/projector.ts';
import { toProblem } from './errors.ts';
import { ProcessPauses } from './process-pauses.ts';
import { CALLER, text } from './responses.ts';

interface Sample {
  readonly labels?: Record<string, string>;
  readonly value: number;
}

interface Family {
  readonly name: string;
  readonly type: 'counter' | 'gauge';
  readonly help: string;
  readonly samples: readonly Sample[];
}

const escapeLabel = (value: string) => value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');

function sampleLine(name: string, { labels, value }: Sample): string {
  const pairs = Object.entries(labels ?? {}).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return `${name}${pairs.length > 0 ? `{${pairs.join(',')}}` : ''} ${value}`;
}

export function renderMetrics(families: readonly Family[]): string {
  return families.flatMap((f) => [`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`, ...f.samples.map((s) => sampleLine(f.name, s))]).join('\n') + '\n';
}


const METRICS_SCHEMA = {
  summary: 'Metrics for Prometheus',
  tags: ['operations'],
  response: { 200: text('Prometheus text format (version 0.0.4)'), ...CALLER },
};

// fastify-plugin: the refusal hook must see errors from every area plugin, not only this one's routes.
const metricsPlugin: FastifyPluginCallbackZod = (app, _options, done) => {
  const { runtime } = app.nomos;
  const deps = { store: runtime.store, db: runtime.db };
  // Counted in-process from the one error mapping, so it starts from zero at each start, as counters may.
  const refusals = new Map<string, number>();
  const pauses = new ProcessPauses();
  app.addHook('onClose', (_app, next) => {
    pauses.close();
    next();
  });

  app.addHook('onError', (_request, _reply, error, next) => {
    const p = toProblem(error);
    if (p.status === 409 && typeof p.rule === 'string') refusals.set(p.rule, (refusals.get(p.rule) ?? 0) + 1);
    next();
  });

  app.get('/metrics', { schema: METRICS_SCHEMA }, async (_request, reply) => {
    const [head, statuses, byStatus, pending] = await Promise.all([
      runtime.store.head(),
      projectionStatus(deps, runtime.projections),
      executionCounts(runtime.db),
      pendingApprovalCount(runtime.db),
    ]);
    // Every known status, zero included, so a series does not vanish when its last row changes status.
    const executionStatuses = [...new Set([...ExecutionStatus.options, ...byStatus.keys()])];
    const { loopDelay, gc } = pauses.sample();
    const guesses = runtime.guesses();
    const gcKinds = [...gc.keys()].sort();
    const body = renderMetrics([
      {
        name: 'nomos_events_appended_total',
        type: 'counter',
        help: "Events appended to the log, read as the event store's head position (monotonic; survives restarts).",
        samples: [{ value: head.position }],
      },
      {
        name: 'nomos_commands_refused_total',
        type: 'counter',
        help: 'Commands refused (409) by a domain rule since this process started, by rule.',
        samples: [...refusals].sort(([a], [b]) => a.localeCompare(b)).map(([rule, value]) => ({ labels: { rule }, value })),
      },
      {
        name: 'nomos_executions',
        type: 'gauge',
        help: 'Executions in the read model, by status.',
        samples: executionStatuses.map((status) => ({ labels: { status }, value: byStatus.get(status) ?? 0 })),
      },
      {
        name: 'nomos_approvals_pending',
        type: 'gauge',
        help: 'Approvals waiting for an operator decision.',
        samples: [{ value: pending }],
      },
      {
        name: 'nomos_projection_position',
        type: 'gauge',
        help: 'Log position each projection has processed.',
        samples: statuses.map((s) => ({ labels: { projection: s.name }, value: s.position })),
      },
      {
        name: 'nomos_projection_lag',
        type: 'gauge',
        help: 'Events between each projection and the head of the log (0: caught up).',
        samples: statuses.map((s) => ({ labels: { projection: s.name }, value: s.lag })),
      },
      {
        name: 'nomos_projection_rebuild_lag',
        type: 'gauge',
        help: 'Events between a rebuild under way (shadow tables) and the head of the log; absent when none is.',
        samples: statuses.flatMap((s) => (s.rebuild ? [{ labels: { projection: s.name }, value: s.rebuild.lag }] : [])),
      },
      {
        name: 'nomos_projector_batches_one_round_trip_total',
        type: 'counter',
        help: 'Live batches the projections this process leads committed in one round trip: the events it had just appended, worked out from the rows it holds (PostgreSQL only).',
        samples: [{ value: guesses.committed }],
      },
      {
        name: 'nomos_projector_guesses_missed_total',
        type: 'counter',
        help: 'Live batches tried that way that went the two-round-trip way instead: another process appended first, or a row was not held. Rising with several servers appending is expected.',
        samples: [{ value: guesses.missed }],
      },
      ...(
        [
          ['p50', 'median', loopDelay.p50],
          ['p99', '99th percentile', loopDelay.p99],
          ['max', 'longest', loopDelay.max],
        ] as const
      ).map(([suffix, what, value]): Family => ({
        name: `nomos_event_loop_delay_${suffix}_seconds`,
        type: 'gauge',
        help: `How late this process's event loop ran since the previous scrape (a 10 ms timer's lateness), ${what}: every request waits through it.`,
        samples: [{ value }],
      })),
      {
        name: 'nomos_gc_pauses_total',
        type: 'counter',
        help: "This process's garbage collections since it started, by kind.",
        samples: gcKinds.map((kind) => ({ labels: { kind }, value: gc.get(kind)!.count })),
      },
      {
        name: 'nomos_gc_pause_seconds_total',
        type: 'counter',
        help: "Time this process's event loop stood still for garbage collection since it started, by kind.",
        samples: gcKinds.map((kind) => ({ labels: { kind }, value: gc.get(kind)!.seconds })),
      },
    ]);
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(body);
  });
  done();
};

export const metricsApi = fp(metricsPlugin, { name: 'nomos-metrics', dependencies: ['nomos-context'] });
