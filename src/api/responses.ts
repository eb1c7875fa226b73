// The answers routes declare besides their own: refusals as problem+json, event streams and text. The OpenAPI
// document lists them and the type provider checks handlers against them; they are not checked per request.
import { z } from 'zod';
import { Attributes } from '../domain/entity/events.ts';
import { ProblemDetails } from './errors.ts';

/** Schemas the document lists once, under components, and refers to from every route. */
export const apiSchemas = z.registry<{ id: string }>();
const Problem = ProblemDetails.register(apiSchemas, { id: 'Problem' });
// Any JSON value (an attribute's) is recursive: the document can only refer to it by a name, so it gets one.
Attributes.valueType.register(apiSchemas, { id: 'JsonValue' });

const PROBLEM = 'application/problem+json';

const problem = (description: string) => ({ description, content: { [PROBLEM]: { schema: Problem } } }) as const;

/** What any route behind the auth hook may answer, whatever it does. */
export const CALLER = {
  400: problem('Bad input, named in `detail`: a parameter or the body (validation_failed, invalid_text, body_too_deep, malformed_request, invalid_cursor), or the X-Nomos-Actor header (bad_actor)'),
  401: problem('No API token, or one this server does not know (unauthenticated)'),
  500: problem('An unexpected failure (internal_error); the server logs it'),
} as const;

/** A route whose caller's role must allow it. */
export const ROLE = { 403: problem("The token's role may not do this (forbidden)") } as const;

/** A command: the caller's role must allow it, and a domain rule may refuse it. */
export const WRITE = {
  ...CALLER,
  ...ROLE,
  409: problem('A domain rule refused the command (`rule` names it), or concurrent writers kept conflicting'),
} as const;

/** A route that reads a JSON body. */
export const BODY = {
  413: problem('The body is larger than the server takes (body_too_large)'),
  415: problem('The body is of a media type the server does not read: send application/json (unsupported_media_type)'),
} as const;

/** A long-lived event stream: one caller holds only so many open. */
export const STREAMS = {
  429: problem('The caller already holds NOMOS_MAX_STREAMS open event streams (too_many_streams, with max_streams): close one first'),
} as const;

/** A read that takes min_position. */
export const LAG = {
  503: problem('The read model did not reach min_position in time (projection_lag, with the lag); retry shortly'),
} as const;

export const notFound = (description: string) => ({ 404: problem(description) }) as const;

export const unavailable = (description: string) => ({ 503: problem(description) }) as const;

/** Server-Sent Events: `data:` lines of JSON, each with an `id:` to resume from. */
export const eventStream = (description: string) => ({ description, content: { 'text/event-stream': { schema: z.string() } } }) as const;

export const text = (description: string) => ({ description, content: { 'text/plain': { schema: z.string() } } }) as const;
