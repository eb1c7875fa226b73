// The verifiable log's doors (docs/verifiable-log.md): the seal's state, the signed checkpoints exactly as signed,
// the public key, and RFC 9162 inclusion and consistency proofs that any verifier can check.
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { consistencyOf, inclusionOf, ProofRefused } from '../log/proofs.ts';
import { latestCheckpoint, listCheckpoints, sealState } from '../log/store.ts';
import { HttpProblem } from './errors.ts';
import { CALLER, notFound, text } from './responses.ts';

const TAGS = ['log'];
const Size = (what: string) => z.coerce.number({ error: `${what} must be a number` }).int({ error: `${what} must be a whole number` }).min(0, { error: `${what} must not be negative` }).max(Number.MAX_SAFE_INTEGER);
const Base64 = z.string().describe('base64');

const CheckpointView = z.object({
  tree_size: z.number().int(),
  root: Base64.describe('the root hash, base64'),
  signed_at: z.string().describe('when it was signed (ISO 8601)'),
  note: z.string().describe('the signed note, exactly as GET /log/checkpoint serves it'),
});

const STATUS_SCHEMA = {
  summary: "The log's seal",
  tags: TAGS,
  description: 'How far the events are sealed into the Merkle tree, the latest signed checkpoint, and how many committed events wait to be sealed (the seal lag).',
  response: {
    200: z.object({
      sealed: z.boolean().describe('false until a server with a signing key first sealed the log'),
      origin: z.string().nullable(),
      tree_size: z.number().int(),
      last_position: z.number().int().describe('the last event position sealed'),
      head_position: z.number().int().describe('the last event position committed'),
      lag_events: z.number().int().describe('committed events not yet sealed'),
      sealed_at: z.string().nullable(),
      checkpoint: CheckpointView.nullable(),
      verification: z
        .object({ at: z.string(), ok: z.boolean(), exit_code: z.number().int(), summary: z.string(), findings: z.unknown() })
        .nullable()
        .describe('the last `nomos verify` against this database, or null'),
    }),
    ...CALLER,
  },
};
const CHECKPOINT_SCHEMA = {
  summary: 'The latest signed checkpoint',
  tags: TAGS,
  description: 'A C2SP tlog-checkpoint in a signed note (origin, tree size, base64 root hash, a blank line, then `— NAME base64(key hash ‖ Ed25519 signature)`), byte for byte as signed.',
  response: { 200: text('the signed note'), ...CALLER, ...notFound('Nothing sealed yet (no_checkpoint)') },
};
const CHECKPOINTS_SCHEMA = {
  summary: 'Signed checkpoints, newest first',
  tags: TAGS,
  querystring: z.strictObject({ limit: z.coerce.number().int().min(1).max(1_000).default(100), before: Size('before').optional().describe('only checkpoints of smaller trees (the next page)') }),
  response: { 200: z.object({ checkpoints: z.array(CheckpointView), next_before: z.number().int().nullable() }), ...CALLER },
};
const PUBLIC_KEY_SCHEMA = {
  summary: "The log's public key",
  tags: TAGS,
  description: 'The Ed25519 key that signs the checkpoints, as PEM (SPKI).',
  response: { 200: text('PEM'), ...CALLER, ...notFound('Nothing sealed yet (not_sealed)') },
};
const INCLUSION_SCHEMA = {
  summary: "An event's inclusion proof",
  tags: TAGS,
  description: "RFC 9162 §2.1.3: the event's leaf (base64 of the exact bytes hashed) and the audit path to the root of the tree of `tree_size` leaves (default: the latest checkpoint's).",
  querystring: z.strictObject({ position: Size('position'), tree_size: Size('tree_size').optional() }),
  response: {
    200: z.object({ position: z.number().int(), leaf_index: z.number().int(), tree_size: z.number().int(), leaf: Base64, hashes: z.array(Base64) }),
    ...CALLER,
    ...notFound('No sealed event at that position (position_not_sealed)'),
  },
};
const CONSISTENCY_SCHEMA = {
  summary: 'A consistency proof between two tree sizes',
  tags: TAGS,
  description: 'RFC 9162 §2.1.4: that the tree of `to` leaves extends the tree of `from` leaves.',
  querystring: z.strictObject({ from: Size('from'), to: Size('to') }),
  response: { 200: z.object({ from: z.number().int(), to: z.number().int(), hashes: z.array(Base64) }), ...CALLER },
};

const checkpointView = (c: { treeSize: number; root: Buffer; signedAt: Date; note: string }) => ({ tree_size: c.treeSize, root: c.root.toString('base64'), signed_at: c.signedAt.toISOString(), note: c.note });

function refused(error: unknown): never {
  if (error instanceof ProofRefused) throw new HttpProblem(error.status, error.code, error.message);
  throw error;
}

export const logApi: FastifyPluginCallbackZod = (app, _options, done) => {
  const { db } = app.nomos.runtime;
  app.get('/log', { schema: STATUS_SCHEMA }, async () => {
    const [state, checkpoint, head] = await Promise.all([sealState(db), latestCheckpoint(db), db.query<{ head: string | null }>('SELECT max(global_position) AS head FROM events')]);
    const headPosition = Number(head.rows[0]?.head ?? 0);
    const last = state?.lastPosition ?? 0;
    const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE global_position > $1', [last]);
    const { rows: verified } = await db.query<{ ran_at: Date | string; ok: boolean; exit_code: number; summary: string; findings: unknown }>(
      'SELECT ran_at, ok, exit_code, summary, findings FROM log_verifications ORDER BY id DESC LIMIT 1',
    );
    const v = verified[0];
    return {
      sealed: state !== null,
      origin: state?.origin ?? null,
      tree_size: state?.size ?? 0,
      last_position: last,
      head_position: headPosition,
      lag_events: Number(rows[0]?.n ?? 0),
      sealed_at: state?.sealedAt.toISOString() ?? null,
      checkpoint: checkpoint && checkpointView(checkpoint),
      verification: v ? { at: new Date(v.ran_at).toISOString(), ok: v.ok, exit_code: Number(v.exit_code), summary: v.summary, findings: v.findings } : null,
    };
  });
  app.get('/log/checkpoint', { schema: CHECKPOINT_SCHEMA }, async (_request, reply) => {
    const checkpoint = await latestCheckpoint(db);
    if (!checkpoint) throw new HttpProblem(404, 'no_checkpoint', 'no checkpoint yet: nothing is sealed (a server with a signing key seals within NOMOS_SEAL_MS)');
    return reply.type('text/plain; charset=utf-8').send(checkpoint.note);
  });
  app.get('/log/checkpoints', { schema: CHECKPOINTS_SCHEMA }, async (request) => {
    const { limit, before } = request.query;
    const page = await listCheckpoints(db, limit + 1, before ?? null);
    const shown = page.slice(0, limit);
    return { checkpoints: shown.map(checkpointView), next_before: page.length > limit ? (shown.at(-1)?.treeSize ?? null) : null };
  });
  app.get('/log/public-key', { schema: PUBLIC_KEY_SCHEMA }, async (_request, reply) => {
    const state = await sealState(db);
    if (!state) throw new HttpProblem(404, 'not_sealed', 'the log is not sealed yet, so it has no key: start a server with a signing key (NOMOS_SIGNING_KEY)');
    return reply.type('text/plain; charset=utf-8').send(state.publicKey);
  });
  app.get('/log/proof/inclusion', { schema: INCLUSION_SCHEMA }, async (request) => {
    const { position, tree_size } = request.query;
    const size = tree_size ?? (await latestCheckpoint(db))?.treeSize;
    if (size === undefined) throw new HttpProblem(400, 'no_checkpoint', 'no checkpoint yet: give tree_size, or wait for the first checkpoint');
    return inclusionOf(db, position, size).catch(refused);
  });
  app.get('/log/proof/consistency', { schema: CONSISTENCY_SCHEMA }, async (request) => consistencyOf(db, request.query.from, request.query.to).catch(refused));
  done();
};
