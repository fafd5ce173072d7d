/**
 * Prepares a namespace of any Temporal server for Loopwright: creates it when it is missing and
 * registers the sessions' search attributes (common/search-attributes.ts), which the embedded dev
 * server gets at start and a cluster does not. Idempotent: what is there already is left alone; an
 * attribute registered with another type is an error, never changed. `loopwright setup-namespace`
 * runs it; so does scripts/cluster.ts for the test cluster.
 */
import type { ConnectionLike } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { SESSION_SEARCH_ATTRIBUTES } from '../../common/search-attributes';

const IndexedValueType = temporal.api.enums.v1.IndexedValueType;

/** The gRPC status codes this reads (numbers of the gRPC spec; @grpc/grpc-js is not a dependency of ours). */
const grpcStatus = { NOT_FOUND: 5, ALREADY_EXISTS: 6, PERMISSION_DENIED: 7, UNIMPLEMENTED: 12, UNAUTHENTICATED: 16 } as const;

/** Retention of closed sessions in a namespace this creates, in days (Temporal's own default is 3 days too). */
export const DEFAULT_RETENTION_DAYS = 3;

/** The namespace could not be prepared; the message says what to do instead (e.g. on Temporal Cloud). */
export class NamespaceSetupError extends Error {
  override readonly name = 'NamespaceSetupError';
}

/** What {@link setupNamespace} found and did. */
export interface NamespaceSetupResult {
  namespace: string;
  /** The namespace was created here (else it existed). */
  created: boolean;
  /** Search attributes registered here. */
  added: string[];
  /** Search attributes that were registered already, with the right type. */
  present: string[];
}

/** Options of {@link setupNamespace}. */
export interface NamespaceSetupOptions {
  namespace: string;
  /** Create the namespace when missing (default true). */
  create?: boolean;
  retentionDays?: number;
  /** How long to wait for the server to see a new namespace and new attributes (default 30 s). */
  timeoutMs?: number;
}

const codeOf = (error: unknown): number | undefined => (error as { code?: number }).code;

/**
 * Creates `namespace` if needed and registers the missing Loopwright* search attributes, then waits
 * until the server lists them. Throws NamespaceSetupError when the server refuses (Temporal Cloud
 * creates namespaces and search attributes through its own API: tcld, Terraform or the Cloud UI).
 */
export async function setupNamespace(connection: ConnectionLike, options: NamespaceSetupOptions): Promise<NamespaceSetupResult> {
  const { namespace } = options;
  const timeoutMs = options.timeoutMs ?? 30_000;
  let created = false;
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (error) {
    if (codeOf(error) !== grpcStatus.NOT_FOUND) throw refused(error, `describe namespace ${namespace}`);
    if (options.create === false) throw new NamespaceSetupError(`namespace ${namespace} does not exist (and creating it was not asked for)`);
    const days = options.retentionDays ?? DEFAULT_RETENTION_DAYS;
    try {
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(days * 86_400_000) });
      created = true;
    } catch (registerError) {
      // Another set-up created it meanwhile: fine.
      if (codeOf(registerError) !== grpcStatus.ALREADY_EXISTS) throw refused(registerError, `create namespace ${namespace}`);
    }
  }

  const listed = async (): Promise<Record<string, number>> => {
    const response = await connection.operatorService.listSearchAttributes({ namespace });
    return Object.fromEntries(Object.entries(response.customAttributes ?? {}).map(([name, type]) => [name, Number(type)]));
  };
  let existing: Record<string, number> = {};
  if (created) {
    // A new namespace is in the database at once, but in the server's namespace cache only at its next refresh.
    await until(timeoutMs, `namespace ${namespace} to be known`, async () => {
      existing = await listed();
      return true;
    });
  } else {
    try {
      existing = await listed();
    } catch (error) {
      throw refused(error, `list the search attributes of ${namespace}`);
    }
  }
  const wanted = SESSION_SEARCH_ATTRIBUTES.map(({ name, type }) => ({ name, type, value: type === 'Int' ? IndexedValueType.INDEXED_VALUE_TYPE_INT : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD }));
  const wrong = wanted.filter(({ name, value }) => existing[name] !== undefined && existing[name] !== value);
  if (wrong.length > 0) {
    const names = wrong.map(({ name, type }) => `${name} (wanted ${type}, registered as ${IndexedValueType[existing[name]] ?? existing[name]})`).join(', ');
    throw new NamespaceSetupError(`namespace ${namespace} has search attributes of the wrong type: ${names}; remove them (temporal operator search-attribute remove) and run this again`);
  }
  const missing = wanted.filter(({ name }) => existing[name] === undefined);
  if (missing.length > 0) {
    try {
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map(({ name, value }) => [name, value])) });
    } catch (error) {
      // Two set-ups at once: the other one added them.
      if (codeOf(error) !== grpcStatus.ALREADY_EXISTS) throw refused(error, `add search attributes to ${namespace}`);
    }
    await until(timeoutMs, `the search attributes of ${namespace} to be listed`, async () => {
      const now = await listed();
      return missing.every(({ name }) => now[name] !== undefined);
    });
  }
  return { namespace, created, added: missing.map(({ name }) => name), present: wanted.filter(({ name }) => existing[name] !== undefined).map(({ name }) => name) };
}

/** A refusal by the server, with what to do on a server that manages namespaces elsewhere. */
function refused(error: unknown, what: string): NamespaceSetupError {
  const code = codeOf(error);
  const hint =
    code === grpcStatus.PERMISSION_DENIED || code === grpcStatus.UNIMPLEMENTED || code === grpcStatus.UNAUTHENTICATED
      ? ' (on Temporal Cloud, create the namespace and its search attributes with tcld, Terraform or the Cloud UI; see docs/guides/deployment.md)'
      : '';
  return new NamespaceSetupError(`could not ${what}: ${(error as Error).message}${hint}`);
}

/** Polls `check` every 200 ms until it returns true; throws NamespaceSetupError after `timeoutMs`. */
async function until(timeoutMs: number, what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      // Not there yet is what a poll expects; the last answer goes into the timeout's message.
      last = error;
    }
    if (Date.now() > deadline) throw new NamespaceSetupError(`gave up waiting for ${what} after ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
