/**
 * Where a durable iteration's time goes, read from the event times of its history (all stamped by
 * the one server): how long each activity took from scheduling to completion, how long a workflow
 * task waited for the worker to pick it up, and how long the worker took to run it.
 */
import type { History } from '@temporalio/common/lib/proto-utils';
import { summarize, type SampleSummary } from './stats';

/** Durations in milliseconds, one summary per kind of step. */
export interface TimelineFigures {
  /** Scheduled to completed, per activity type (callModel, read_file, ...). */
  activities: Record<string, SampleSummary>;
  /** Workflow task scheduled to started: waiting for the worker's poll. */
  workflowTaskDispatch: SampleSummary;
  /** Workflow task started to completed: the worker running workflow code and answering. */
  workflowTaskRun: SampleSummary;
}

type Timestamp = { seconds?: unknown; nanos?: number | null } | null | undefined;

/**
 * Summarise the steps of `history` that belong to its turns (agent initialisation aside), or all of
 * them with `whole` (a workflow with no turns, such as the bench's bare loop).
 */
export function measureTimeline(history: History, whole = false): TimelineFigures {
  const times = new Map<string, { at: number; activity?: string }>();
  const activities: Record<string, number[]> = {};
  const dispatch: number[] = [];
  const run: number[] = [];
  let inTurn = whole;
  for (const event of history.events ?? []) {
    const at = millis(event.eventTime);
    const id = String(event.eventId);
    if (event.workflowExecutionUpdateAcceptedEventAttributes) inTurn = true;
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) times.set(id, { at, activity: scheduled.activityType?.name ?? 'unknown' });
    if (event.workflowTaskScheduledEventAttributes) times.set(id, { at });
    // Started events are looked up by the completion that follows them.
    if (event.workflowTaskStartedEventAttributes) times.set(id, { at });
    if (!inTurn) continue;
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const from = times.get(String(completed.scheduledEventId));
      if (from?.activity) (activities[from.activity] ??= []).push(at - from.at);
    }
    const started = event.workflowTaskStartedEventAttributes;
    const from = started ? times.get(String(started.scheduledEventId)) : undefined;
    if (from) dispatch.push(at - from.at);
    const done = event.workflowTaskCompletedEventAttributes;
    const begun = done ? times.get(String(done.startedEventId)) : undefined;
    if (begun) run.push(at - begun.at);
  }
  return {
    activities: Object.fromEntries(Object.entries(activities).map(([name, samples]) => [name, summarize(samples)])),
    workflowTaskDispatch: summarize(dispatch),
    workflowTaskRun: summarize(run),
  };
}

function millis(time: Timestamp): number {
  if (!time) return 0;
  return Number(time.seconds ?? 0) * 1000 + (time.nanos ?? 0) / 1e6;
}
