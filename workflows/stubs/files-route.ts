/**
 * Routing of the activities that touch files to the workers of the session's files host (see
 * common/files-host.ts), and waiting for one when none is there: each attempt is scheduled with a
 * schedule-to-start timeout; when it passes, the session says it is waiting and schedules the call
 * again, with a longer timeout each time (up to five minutes), until a worker of the host takes it.
 * Nothing ever runs on another host, and nothing fails for want of a worker. Deterministic: the
 * loop follows recorded timeouts only.
 */
import { ActivityFailure, type ActivityInterfaceFor, type ActivityOptions, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import { FILES_WAIT_NOTICE_MS } from '../../common/files-host';

/** Where file activities go, and how the session hears that it waits for them. */
export interface FilesRoute {
  /** The files host's task queue. */
  queue: string;
  /** True while a call waits past its schedule-to-start timeout; false once one is taken. */
  onWaiting(waiting: boolean): void;
  /** The first schedule-to-start timeout, in ms (default FILES_WAIT_NOTICE_MS). */
  firstWaitMs?: number;
}

const MAX_WAIT_MS = 5 * 60_000;

type AnyActivity = (...args: unknown[]) => Promise<unknown>;

/** `proxyActivities(options)`, with every activity scheduled on the files host's queue and waited for there. */
export function filesProxy<A extends object>(options: ActivityOptions, route: FilesRoute): ActivityInterfaceFor<A> {
  return new Proxy(
    {},
    {
      get: (_target, name) => (typeof name === 'string' ? routedStub(name, options, route) : undefined),
    },
  ) as ActivityInterfaceFor<A>;
}

function routedStub(name: string, options: ActivityOptions, route: FilesRoute) {
  const run = async (extra: Partial<ActivityOptions>, args: unknown[]): Promise<unknown> => {
    let wait = route.firstWaitMs ?? FILES_WAIT_NOTICE_MS;
    for (;;) {
      const stub = proxyActivities<Record<string, AnyActivity>>({ ...options, taskQueue: route.queue, scheduleToStartTimeout: wait })[name]!;
      try {
        const result = await stub.executeWithOptions(extra, args);
        route.onWaiting(false);
        return result;
      } catch (err) {
        if (!isScheduleToStartTimeout(err)) {
          route.onWaiting(false);
          throw err;
        }
        route.onWaiting(true);
        wait = Math.min(wait * 2, MAX_WAIT_MS);
      }
    }
  };
  return Object.assign((...args: unknown[]) => run({}, args), { executeWithOptions: run });
}

/** An activity no worker took within its schedule-to-start timeout (it never ran). */
export function isScheduleToStartTimeout(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START;
}
