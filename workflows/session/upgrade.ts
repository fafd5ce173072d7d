/**
 * Moving a session to a newer build. Under Worker Deployment Versioning each run is pinned to the
 * build that started it; when another build becomes the deployment's current one, the server says
 * so on the run's next workflow task (`targetWorkerDeploymentVersionChanged`, recorded in history,
 * so replay decides the same). The session then continues as new at its next turn boundary — an
 * idle point, never inside a turn — with the upgrade behaviour, so the next run starts on the
 * current build and reads the carried state (common/continued-contract.ts). On an unversioned
 * worker the flag is never set and nothing here changes what a run does.
 */
import { continueAsNew, makeContinueAsNewFunc, workflowInfo } from '@temporalio/workflow';
import type { SessionInput, SessionResult } from '../../common/session-types';

/** True when a newer build than the one this run is pinned to is the deployment's current (or ramping) one. */
export function newerBuildCurrent(): boolean {
  return workflowInfo().targetWorkerDeploymentVersionChanged === true;
}

/** The build this run is on, when its worker is versioned. */
export function currentBuild(): string | undefined {
  return workflowInfo().currentDeploymentVersion?.buildId;
}

/**
 * Continue as new with `next`: onto the deployment's current build when `upgrade` (the next run's
 * first task goes to that build, and it is pinned there), else on this run's build.
 */
export function continueSession(next: SessionInput, upgrade: boolean): Promise<never> {
  type Session = (input: SessionInput) => Promise<SessionResult>;
  if (!upgrade) return continueAsNew<Session>(next);
  return makeContinueAsNewFunc<Session>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(next);
}
