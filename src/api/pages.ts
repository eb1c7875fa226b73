// Keyset pages for a session's lists (events, tool calls, executions): `limit` (default PAGE_DEFAULT, at most
// PAGE_MAX) and an opaque `cursor` from the previous page; the next page's address goes out in a Link header
// (RFC 8288), as GET /sessions does, so that no answer and no read on the server grows with the session.
import type { FastifyReply } from 'fastify';
import { z } from 'zod';

export const PAGE_DEFAULT = 500;
export const PAGE_MAX = 1_000;

/** Where the next page starts: an item's key, written as digits (clients pass it back as they got it). */
const Cursor = z.preprocess(
  (v) => (v === '' ? undefined : v),
  z
    .string()
    .regex(/^\d{1,15}$/, 'must be the next_cursor (or the Link header cursor) of a previous page')
    .transform(Number)
    .optional(),
);

export const PageQuery = {
  limit: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).max(PAGE_MAX).default(PAGE_DEFAULT)).describe(`items per page (default ${PAGE_DEFAULT}, at most ${PAGE_MAX})`),
  cursor: Cursor.describe('the next_cursor (or Link rel="next") of the previous page; absent for the first'),
};

/** Says where the next page is (nothing on the last): the Link header; the cursor for object bodies. */
export function linkNext(reply: FastifyReply, path: string, limit: number, next: number | null): string | null {
  if (next === null) return null;
  const cursor = String(next);
  void reply.header('link', `<${path}?${new URLSearchParams({ limit: String(limit), cursor }).toString()}>; rel="next"`);
  return cursor;
}
