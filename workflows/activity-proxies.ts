/**
 * Activity stubs with their timeouts and retry policies. Each tool is its own activity type so the
 * Web UI shows which one ran.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { SessionActivities } from '../common/activity-types';

/** Reading the bundle is local and quick; a bad bundle is the operator's to fix, so do not retry it for long. */
export const initActivities = proxyActivities<Pick<SessionActivities, 'initializeAgent'>>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
});

/**
 * Model calls can be slow; they heartbeat so a dead worker is noticed within the heartbeat timeout
 * and so an interrupt reaches the HTTP request. The activity marks 4xx errors non-retryable and
 * passes Retry-After through `nextRetryDelay`, so this policy only shapes the default backoff.
 */
export const modelActivities = proxyActivities<Pick<SessionActivities, 'callModel'>>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

/** Tools report expected failures as results; the retries are for unexpected ones (I/O errors, a lost worker). */
export const toolActivities = proxyActivities<Pick<SessionActivities, 'read_file' | 'execute_workflow'>>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '500 milliseconds', maximumAttempts: 3 },
});

/** `save_output` writes atomically and is idempotent, so retrying it is always safe. */
export const saveActivities = proxyActivities<Pick<SessionActivities, 'save_output'>>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '500 milliseconds', maximumAttempts: 5 },
});
