/** The session's side of file routing: where file activities go, and the state while it waits for them. */
import { log, workflowInfo } from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { filesQueue } from '../../common/files-host';
import type { FilesRoute } from '../stubs/files-route';
import type { SessionRuntime } from './session-runtime';

/** The route to `host`'s workers; `runtime` is read only when a wait begins or ends (after the session is built). */
export function filesRoute(host: string, runtime: () => SessionRuntime, firstWait?: Duration): FilesRoute {
  return {
    ...(firstWait !== undefined ? { firstWaitMs: msToNumber(firstWait) } : {}),
    queue: filesQueue(workflowInfo().taskQueue, host),
    onWaiting(waiting: boolean): void {
      const rt = runtime();
      if (waiting === (rt.state.waitingForFiles !== undefined)) return;
      if (waiting) {
        rt.state.waitingForFiles = { host, since: new Date().toISOString() };
        log.warn('No worker of the files host has taken a file activity; waiting for one', { host, queue: filesQueue(workflowInfo().taskQueue, host) });
      } else {
        delete rt.state.waitingForFiles;
        log.info('A worker of the files host took the file activity', { host });
      }
      rt.refreshDetails();
    },
  };
}
