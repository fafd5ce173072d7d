/**
 * Heartbeating while the model thinks. Heartbeats tell Temporal the worker is alive (so a killed
 * worker is noticed within the heartbeat timeout) and are how a cancellation reaches a running
 * activity at all.
 */
import { Context } from '@temporalio/activity';

/**
 * Heartbeat every `intervalMs` (or half the activity's heartbeat timeout, if shorter) until the
 * returned function is called. Not at once: the heartbeat timeout runs from the activity's start,
 * and a first beat would cost a call to the server for every model call, most of which end sooner. Each beat carries `details()` when given: Temporal keeps
 * only the latest heartbeat's details, so a streamed call's progress must be repeated, not replaced.
 */
export function startHeartbeat(intervalMs: number, details?: () => unknown): () => void {
  const context = Context.current();
  const timeoutMs = context.info.heartbeatTimeoutMs;
  const every = timeoutMs && timeoutMs > 0 ? Math.min(intervalMs, Math.max(1, Math.floor(timeoutMs / 2))) : intervalMs;
  const beat = (): void => {
    try {
      context.heartbeat(details?.());
    } catch (err) {
      // A heartbeat can only fail once the activity is being torn down; the model call's own
      // outcome (or the cancellation) is what must surface, not this.
      void err;
    }
  };
  const timer = setInterval(beat, every);
  return () => clearInterval(timer);
}

/** Heartbeats now and every second while inside an activity (nothing outside one); returns the stop. */
export function heartbeatEverySecond(): () => void {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return () => undefined;
  }
  const beat = (): void => {
    try {
      context.heartbeat();
    } catch {
      // Only while the activity is torn down; its outcome is what surfaces.
    }
  };
  beat();
  const timer = setInterval(beat, 1000);
  return () => clearInterval(timer);
}
