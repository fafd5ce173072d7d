/**
 * Every error of the API has one shape, `{error: {type, message, field?}}`, with a 4xx or 5xx
 * status: the route's own (`ApiError`), the framework's (a body that fails its schema, too large,
 * not JSON), the session's refusals (`busy`, a message too large: their failure type), Temporal's
 * (a session that does not exist, a server that does not answer) and the bundle's (not a bundle, no
 * such agent). Anything else is a 500 whose message says nothing about the inside.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { BAD_INPUT, TOO_LARGE } from '../common/failure-types';
import { BundleError } from '../bundle/errors';
import { SessionRejectedError } from '../client/session-client';

/** What an error response carries. */
export interface ApiErrorBody {
  error: { type: string; message: string; field?: string };
}

/** An error a route answers with. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** gRPC status UNAVAILABLE: the Temporal server is down or unreachable. */
const GRPC_UNAVAILABLE = 14;
/** gRPC DEADLINE_EXCEEDED: no answer in time (a query with no worker to answer it). */
const GRPC_DEADLINE_EXCEEDED = 4;

const STATUS_TYPES: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  408: 'RequestTimeout',
  409: 'Conflict',
  413: 'TooLarge',
  415: 'UnsupportedMediaType',
  429: 'TooManyRequests',
  503: 'ServerUnreachable',
};

/** The status and body an error is answered with. */
export function errorResponse(err: unknown): { status: number; body: ApiErrorBody } {
  const body = (status: number, type: string, message: string, field?: string) => ({ status, body: { error: { type, message, ...(field ? { field } : {}) } } });
  if (err instanceof ApiError) return body(err.status, err.type, err.message, err.field);
  if (err instanceof SessionRejectedError) {
    const status = err.type === TOO_LARGE ? 413 : err.type === BAD_INPUT ? 400 : 409;
    return body(status, err.type ?? STATUS_TYPES[status]!, err.message);
  }
  if (err instanceof WorkflowNotFoundError) return body(404, 'NotFound', `No session ${err.workflowId ?? ''}`.trim());
  if (err instanceof WorkflowExecutionAlreadyStartedError) return body(409, 'AlreadyExists', `A session ${err.workflowId} already exists`);
  if (err instanceof BundleError) return body(400, err.constructor.name, err.message);
  const framework = err as {
    statusCode?: unknown;
    validation?: { instancePath?: string; params?: { missingProperty?: string; additionalProperty?: string } }[];
    validationContext?: string;
    message?: string;
  };
  if (Array.isArray(framework.validation)) {
    const first = framework.validation[0];
    const at = first?.params?.missingProperty ?? first?.params?.additionalProperty ?? first?.instancePath?.replace(/^\//, '').replace(/\//g, '.');
    return body(400, 'BadRequest', framework.message ?? 'invalid request', at || undefined);
  }
  if (typeof framework.statusCode === 'number' && framework.statusCode >= 400 && framework.statusCode < 500) {
    return body(framework.statusCode, STATUS_TYPES[framework.statusCode] ?? 'BadRequest', framework.message ?? 'bad request');
  }
  if (isGrpcCode(err, GRPC_UNAVAILABLE)) return body(503, 'ServerUnreachable', 'The Temporal server does not answer');
  if (isGrpcCode(err, GRPC_DEADLINE_EXCEEDED)) return body(503, 'ServerUnreachable', 'The Temporal server (or a worker of the session) did not answer in time');
  return body(500, 'Internal', 'Internal error (the serve process logs it)');
}

/** Whether `err` or one of its causes is a gRPC error with `code`. */
function isGrpcCode(err: unknown, code: number): boolean {
  for (let current: unknown = err, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    if ((current as { code?: unknown }).code === code) return true;
  }
  return false;
}
