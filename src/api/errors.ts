// The one place errors become HTTP answers: application/problem+json with a stable code.
// Validation → 400 naming the field, unknown → 404, a refused rule or a lost race → 409, lag → 503.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ConcurrencyError } from '../ports/event-store.ts';
import { Forbidden, NotFound, RuleViolation } from '../domain/messages.ts';
import { InvalidCursorError } from '../projections/sessions.ts';

/** An error raised by the API layer itself, with its HTTP status and stable code. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'HttpProblem';
  }
}

/** Every refusal's body (RFC 9457 problem details with a stable code), as the OpenAPI document lists it. */
export const ProblemDetails = z.looseObject({
  type: z.string(),
  status: z.number().int(),
  title: z.string(),
  code: z.string().describe('stable code: validation_failed, session_not_found, a refused rule, projection_lag, …'),
  detail: z.string().describe('what is wrong, naming the field or the rule'),
  errors: z.array(z.object({ field: z.string(), message: z.string() })).optional().describe('400: each field refused, by its path (body.steps[0].title)'),
  rule: z.string().optional().describe('409: the domain rule that refused the command'),
  min_position: z.number().int().optional().describe('503 projection_lag: the position asked for'),
  as_of_position: z.number().int().optional().describe('503 projection_lag: the position the read model reflects'),
  lag: z.number().int().optional().describe('503 projection_lag: events between the read model and the head of the log'),
});
type Problem = z.infer<typeof ProblemDetails>;

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

function problem(status: number, code: string, detail: string, extra: Record<string, unknown> = {}): Problem {
  return { type: `about:blank`, status, title: TITLES[status] ?? 'Error', code, detail, ...extra };
}

/** Fastify's own refusals under codes of ours; any other 400 of Fastify's is a malformed request. */
const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_BAD_URL: 'malformed_url',
};

export function toProblem(error: unknown): Problem {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const where = error.validationContext ?? 'request';
    const errors = error.validation.map((v) => {
      const path = v.instancePath.replace(/^\//, '').replaceAll('/', '.');
      return { field: path ? `${where}.${path}` : where, message: v.message ?? 'invalid' };
    });
    // A check that names its own refusal (command_too_long, control_character) answers under that code, with its figures.
    const named = error.validation.map((v) => (v.params as { params?: { problem?: unknown } }).params).find((p) => typeof p?.problem === 'string');
    const { problem: code = 'validation_failed', ...figures } = (named ?? {}) as { problem?: string };
    return problem(400, code, errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors, ...figures });
  }
  if (error instanceof HttpProblem) return problem(error.status, error.code, error.message, error.extra);
  if (error instanceof RuleViolation) return problem(409, error.rule, error.message, { rule: error.rule });
  if (error instanceof NotFound) return problem(404, error.code, error.message);
  if (error instanceof Forbidden) return problem(403, error.code, error.message);
  if (error instanceof ConcurrencyError) {
    return problem(409, error.code, `${error.message}; the command was retried and kept conflicting with concurrent writers — retry it`);
  }
  if (error instanceof InvalidCursorError) return problem(400, 'invalid_cursor', error.message);
  const fe = error as Partial<FastifyError>;
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    const code = FASTIFY_CODES[fe.code ?? ''] ?? (fe.statusCode === 400 ? 'malformed_request' : (fe.code ?? 'bad_request').toLowerCase());
    return problem(fe.statusCode, code, fe.message ?? 'bad request');
  }
  return problem(500, 'internal_error', 'internal error');
}

/** Fastify's `frameworkErrors`: a request it refuses before routing (a path that is not valid UTF-8) answered like the rest. */
export function answerFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const p = toProblem(error);
  void reply.status(p.status).type('application/problem+json').send(p);
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const p = toProblem(error);
    if (p.code === 'body_too_large') {
      const limit = request.routeOptions.bodyLimit;
      Object.assign(p, { detail: `the body is larger than ${limit} bytes, the most this server takes (NOMOS_BODY_LIMIT)`, max_bytes: limit });
    }
    if (typeof p.retry_after_seconds === 'number') void reply.header('retry-after', String(p.retry_after_seconds));
    if (p.status >= 500) request.log.error({ err: error }, 'unhandled error');
    return reply.status(p.status).type('application/problem+json').send(p);
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .type('application/problem+json')
      .send(problem(404, 'no_such_route', `no route ${request.method} ${request.url.split('?')[0] ?? ''}`)),
  );
}
