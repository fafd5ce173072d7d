/**
 * The gRPC status codes the client acts on, and the code of an SDK error that carries one (its
 * cause). Numbers, as gRPC defines them: the client does not depend on gRPC's package itself.
 */

/** The server's deadline passed (not a cancellation of ours, which the same SDK errors also cover). */
export const GRPC_DEADLINE_EXCEEDED = 4;
/** The server could not act on the workflow as it is now (WorkflowNotReady: the workflow task carrying an update failed). */
export const GRPC_FAILED_PRECONDITION = 9;
/** No server answered (one restarting, say). */
export const GRPC_UNAVAILABLE = 14;

/** The gRPC status code an SDK error carries in its cause, if any. */
export function grpcCode(err: unknown): unknown {
  return ((err as { cause?: unknown } | undefined)?.cause as { code?: unknown } | undefined)?.code;
}
