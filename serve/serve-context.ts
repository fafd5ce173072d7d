/**
 * What the routes of `loopwright serve` work with: the client library on one task queue, where the
 * Temporal server is (as the health route tells it), the Web UI's base URL, and the session feeds.
 */
import type { Client } from '@temporalio/client';
import type { LoopwrightClient } from '../client/session-client';
import type { FeedRegistry } from './events/session-feed';
import type { StreamLimits } from './events/sse-stream';

export interface ServeContext {
  loopwright: LoopwrightClient;
  client: Client;
  /** Where the Temporal server is (no credentials: the address and namespace only). */
  temporal: { address: string; namespace: string };
  taskQueue: string;
  /** Base URL of the Temporal Web UI, when known. */
  uiUrl?: string;
  feeds: FeedRegistry;
  streamLimits: StreamLimits;
  /** The example bundle's folder, for a client to offer (absent when there is none). */
  exampleBundle?: string;
  /**
   * The project folder the example bundle's sessions work in (`loopwright demo`'s), so they never
   * write into the package's own folder; created when first named.
   */
  exampleProject?: string;
  /** Sessions run on Loopwright's scripted model (no model is configured). */
  scriptedModel?: boolean;
}

/** The session's page in the Temporal Web UI, when its base URL is known. */
export function webUiUrl(context: Pick<ServeContext, 'uiUrl' | 'temporal'>, workflowId: string): string | undefined {
  if (!context.uiUrl) return undefined;
  return `${context.uiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(context.temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
