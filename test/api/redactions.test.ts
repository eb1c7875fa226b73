// Redaction on both databases: an operator redacts a secret from a message event after it was sealed; the secret
// is gone from the stored payload, the read models and the PayloadRedacted event, the sealed leaf's proof still
// verifies against the checkpoint signed before, `nomos verify` reports the redaction as such (not tampering) and
// finds the read models still the fold of the log. Bad input (another role, text not there, another session's
// event, a malformed body) is refused, naming it, with nothing written.
import { createPublicKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/tokens.ts';
import { generateSigningKey } from '../../src/log/keys.ts';
import { leafHash, verifyInclusion } from '../../src/log/merkle.ts';
import { verifyChain } from '../../src/log/verify-chain.ts';
import { checkFold } from '../../src/projections/fold-check.ts';
import { projections } from '../../src/runtime.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

const OPERATOR = 'alice-token-0123456789abcdef-0123456';
const AGENT = 'bot-token-0123456789abcdef-01234567';
const AUDITOR = 'auditor-token-0123456789abcdef-0123';
const tokens = parseTokens(`operator:alice:${OPERATOR},agent:bot:${AGENT},auditor:carol:${AUDITOR}`);
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const SECRET = 'hunter2-s3cr3t-token';
const b64 = (s: string) => Buffer.from(s, 'base64');

describe.each(databases)('redaction on $name', (database) => {
  let server: TestServer;
  let id: string;
  let other: string;
  let position: number;

  const sealedAll = () =>
    until('sealed and checkpointed', async () => {
      const log = (await server.request('GET', '/log', undefined, as(AUDITOR))).body;
      return log.lag_events === 0 && log.checkpoint?.tree_size === log.tree_size ? log : undefined;
    });

  beforeAll(async () => {
    server = await startTestServer(database, { tokens });
    id = (await server.request('POST', '/sessions', undefined, as(AGENT))).body.session_id as string;
    other = (await server.request('POST', '/sessions', undefined, as(AGENT))).body.session_id as string;
    const posted = await server.request('POST', `/sessions/${id}/commands`, { type: 'post_user_message', text: `the backup password is ${SECRET}, and ${SECRET} again` }, as(AGENT));
    expect(posted.status).toBe(200);
    position = posted.body.position as number;
    await server.runtime.startSealer({ key: generateSigningKey(), sealMs: 20, checkpointEvery: { events: 1, ms: null } });
    await sealedAll();
  }, 60_000);
  afterAll(async () => server?.close());

  const count = async () => (await server.runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n;

  it('refuses bad input, naming it, and writes nothing', async () => {
    const before = await count();
    const body = { position, text: SECRET, reason: 'a password pasted into the chat' };
    const cases: [Record<string, string>, unknown, string, number, string | RegExp][] = [
      [as(AGENT), body, id, 403, 'forbidden'],
      [as(AUDITOR), body, id, 403, 'forbidden'],
      [as(OPERATOR), { ...body, text: 'not in there at all' }, id, 409, 'text_not_found'],
      // A key or a piece of the JSON's structure is not a value: nothing to redact, and nothing renamed or broken.
      [as(OPERATOR), { ...body, text: 'message_id' }, id, 409, 'text_not_found'],
      [as(OPERATOR), { ...body, text: '", "' }, id, 409, 'text_not_found'],
      [as(OPERATOR), body, other, 404, 'event_not_in_session'],
      [as(OPERATOR), { ...body, position: 999_999 }, id, 404, 'event_not_in_session'],
      [as(OPERATOR), { ...body, text: 'abc' }, id, 400, /text/],
      [as(OPERATOR), { position, text: SECRET }, id, 400, /reason/],
      [as(OPERATOR), { ...body, position: 'x' }, id, 400, /position/],
    ];
    for (const [headers, sent, session, status, named] of cases) {
      const res = await server.request('POST', `/sessions/${session}/redactions`, sent, headers);
      expect({ sent, status: res.status }).toEqual({ sent, status });
      if (typeof named === 'string') expect(res.body.code).toBe(named);
      else expect(JSON.stringify(res.body)).toMatch(named);
    }
    expect(await count()).toBe(before);
  });

  it('redacts the payload and the read models, keeps the proofs, and verify reports it as a redaction', async () => {
    const log = (await server.request('GET', '/log', undefined, as(AUDITOR))).body;
    const signedRoot = b64(log.checkpoint.root as string);
    const size = log.checkpoint.tree_size as number;
    const proofBefore = (await server.request('GET', `/log/proof/inclusion?position=${position}&tree_size=${size}`, undefined, as(AUDITOR))).body;

    const res = await server.request('POST', `/sessions/${id}/redactions`, { position, text: SECRET, reason: 'a password pasted into the chat' }, as(OPERATOR));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ position, occurrences: 2, data_sha256: JSON.parse(b64(proofBefore.leaf).toString()).data_sha256 });
    expect(res.body.read_model_rows.messages).toBe(1);

    const { rows } = await server.runtime.db.query<{ text: string }>('SELECT data::text AS text FROM events');
    expect(rows.filter((r) => r.text.includes(SECRET))).toEqual([]);
    const session = (await server.request('GET', `/sessions/${id}?min_position=${res.body.redaction_position}`, undefined, as(AUDITOR))).body;
    expect(session.messages[0].content.text).toBe('the backup password is [REDACTED], and [REDACTED] again');
    const redaction = (await server.request('GET', `/sessions/${id}/events`, undefined, as(AUDITOR))).body.events.find((e: { position: number }) => e.position === position);
    expect(JSON.stringify(redaction)).not.toContain(SECRET);

    // The same leaf, the same proof, against the checkpoint signed before the redaction.
    const proofAfter = (await server.request('GET', `/log/proof/inclusion?position=${position}&tree_size=${size}`, undefined, as(AUDITOR))).body;
    expect(proofAfter).toEqual(proofBefore);
    expect(verifyInclusion(proofAfter.leaf_index, size, leafHash(b64(proofAfter.leaf)), (proofAfter.hashes as string[]).map(b64), signedRoot)).toBe(true);

    await sealedAll();
    const chain = await verifyChain(server.runtime.db, null, (pem) => createPublicKey(pem));
    expect(chain.findings).toEqual([{ kind: 'redacted', position, by: { role: 'operator', id: 'alice' }, reason: 'a password pasted into the chat', redaction_position: res.body.redaction_position }]);
    for (const projection of projections) {
      const fold = await checkFold(server.runtime.db, server.runtime.store, projection);
      expect({ projection: fold.projection, differences: fold.differences, skipped: fold.skipped }).toEqual({ projection: projection.name, differences: [], skipped: null });
    }
    // A second redaction of the same text finds nothing left.
    const again = await server.request('POST', `/sessions/${id}/redactions`, { position, text: SECRET, reason: 'again' }, as(OPERATOR));
    expect(again.status).toBe(409);
  });
});
