/**
 * Make a build the current version of its Worker Deployment: new sessions start on it, and pinned
 * sessions of older builds move to it at their next turn boundary. The server knows a version
 * only once one of its workers has polled, so this waits for that first. The same as
 * `temporal worker deployment set-current-version`; used by `loopwright worker --make-current`.
 */
import type { Client } from '@temporalio/client';
import { toCanonicalString, type WorkerDeploymentVersion } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

/** gRPC NOT_FOUND: the deployment does not exist yet (no worker of it polled). */
const GRPC_NOT_FOUND = 5;
/**
 * gRPC FAILED_PRECONDITION and ABORTED: not every task queue of the build has been polled yet (its
 * pollers reach the server one by one), or the deployment changed since it was described. Both
 * pass once the build's workers are all polling; tried again until the deadline.
 */
const RETRIED_CODES = new Set([9, 10]);

/** The version did not appear in its deployment within the time given. */
export class DeploymentVersionNotFoundError extends Error {
  override readonly name = 'DeploymentVersionNotFoundError';
}

/**
 * Set `version` current once the server lists it (a worker of it polls), trying for `timeoutMs`.
 * Resolves to the build that was current before (undefined: none).
 */
export async function makeBuildCurrent(client: Client, version: WorkerDeploymentVersion, options: { timeoutMs?: number; identity?: string } = {}): Promise<string | undefined> {
  const namespace = client.options.namespace;
  const canonical = toCanonicalString(version);
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const described = await client.workflowService.describeWorkerDeployment({ namespace, deploymentName: version.deploymentName }).catch((err: unknown) => {
      if ((err as { code?: unknown }).code === GRPC_NOT_FOUND) return undefined;
      throw err;
    });
    const info = described?.workerDeploymentInfo;
    if (described && info?.versionSummaries?.some((v) => v.deploymentVersion?.buildId === version.buildId || v.version === canonical)) {
      const previous = info.routingConfig?.currentDeploymentVersion?.buildId ?? undefined;
      if (previous === version.buildId) {
        await propagated(client, version, deadline);
        return previous;
      }
      const set = await client.workflowService
        .setWorkerDeploymentCurrentVersion({
          namespace,
          deploymentName: version.deploymentName,
          buildId: version.buildId,
          conflictToken: described.conflictToken,
          ...(options.identity ? { identity: options.identity } : {}),
        })
        .then(
          () => true,
          (err: unknown) => {
            if (!RETRIED_CODES.has((err as { code?: number }).code ?? -1) || Date.now() > deadline) throw err;
            return false;
          },
        );
      if (set) {
        await propagated(client, version, deadline);
        return previous || undefined;
      }
    } else if (Date.now() > deadline) {
      throw new DeploymentVersionNotFoundError(`build ${canonical} did not appear in deployment ${version.deploymentName}: no worker of it polled`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Wait until the server has handed the new routing to all its task queue partitions: from then on
 * new sessions start on the build, and the sessions of older builds learn of it on their next step.
 */
async function propagated(client: Client, version: WorkerDeploymentVersion, deadline: number): Promise<void> {
  for (;;) {
    const { workerDeploymentInfo: info } = await client.workflowService.describeWorkerDeployment({ namespace: client.options.namespace, deploymentName: version.deploymentName });
    const current = info?.routingConfig?.currentDeploymentVersion?.buildId === version.buildId;
    if (current && info?.routingConfigUpdateState !== temporal.api.enums.v1.RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_IN_PROGRESS) return;
    if (Date.now() > deadline) throw new DeploymentVersionNotFoundError(`build ${toCanonicalString(version)} was made current, but the server had not passed that on to its task queues in time`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
