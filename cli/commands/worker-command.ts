/**
 * `loopwright worker`: a long-lived worker for the task queue. The first SIGINT or SIGTERM shuts it
 * down gracefully (running activities get the grace period to finish); a second one exits at once.
 * (The SDK runtime's own signal handlers are off: see exit-on-signal.ts.)
 */
import os from 'node:os';
import { createWorker } from '../../worker/create-worker';
import { onSignalGracefully } from '../exit-on-signal';
import type { CommandOutput } from '../output';
import { installRuntimeLogging } from '../runtime-logging';
import { closeNativeConnection, openTemporal } from '../temporal-session';
import { shutdownTracing } from '../../worker/tracing';
import { closeDefaultMcpPool } from '../../activities/mcp/default-pool';
import { CustomToolError } from '../../activities/tools/custom-tool';
import { loadToolModules, ToolModuleError, toolModulesFromEnv } from '../../worker/tool-modules';
import { loadScorerModules, scorerModulesFromEnv } from '../../worker/scorer-modules';
import { ScorerError } from '../../activities/eval/scorers';
import { checkBuildId, checkDeploymentName, type DeploymentOptions, deploymentFromEnv, DeploymentSettingError } from '../../worker/deployment';
import { makeBuildCurrent } from '../../worker/current-build';

/** The worker's options, as commander parsed them. */
export interface WorkerOptions {
  taskQueue?: string;
  toolModule?: string[];
  /** `--scorer-module`: custom scorers for evals (`defineScorer`). */
  scorerModule?: string[];
  /** The operator's command rules for every session this worker starts (`--allow-command`, `--deny-command`). */
  allowCommand?: string[];
  denyCommand?: string[];
  /** `--deployment`: run versioned, in this Worker Deployment. */
  deployment?: string;
  /** `--build-id`: run versioned, as this build (default: derived from the package version and the workflow bundle). */
  buildId?: string;
  /** `--make-current`: once polling, make this build the deployment's current one. */
  makeCurrent?: boolean;
}

/** The worker's deployment from its flags, then LOOPWRIGHT_DEPLOYMENT and LOOPWRIGHT_BUILD_ID; undefined: unversioned. */
export function workerDeployment(options: Pick<WorkerOptions, 'deployment' | 'buildId' | 'makeCurrent'>, env: NodeJS.ProcessEnv = process.env): DeploymentOptions | undefined {
  if (options.deployment !== undefined) checkDeploymentName(options.deployment, '--deployment');
  if (options.buildId !== undefined) checkBuildId(options.buildId, '--build-id');
  const fromEnv = deploymentFromEnv(env);
  const deploymentName = options.deployment ?? fromEnv?.deploymentName;
  const buildId = options.buildId ?? fromEnv?.buildId;
  if (deploymentName === undefined && buildId === undefined) {
    if (options.makeCurrent) throw new DeploymentSettingError('--make-current', 'only a versioned worker has a build to make current: add --deployment <name> or --build-id <id>');
    return undefined;
  }
  return { ...(deploymentName !== undefined ? { deploymentName } : {}), ...(buildId !== undefined ? { buildId } : {}) };
}

export async function workerCommand(options: WorkerOptions, out: CommandOutput): Promise<number> {
  // Tool modules load before any connection: a bad one is a usage error naming it.
  let tools;
  let scorers;
  let deployment;
  try {
    deployment = workerDeployment(options);
    tools = await loadToolModules([...toolModulesFromEnv(), ...(options.toolModule ?? [])]);
    scorers = await loadScorerModules([...scorerModulesFromEnv(), ...(options.scorerModule ?? [])]);
  } catch (err) {
    if (!(err instanceof ToolModuleError || err instanceof CustomToolError || err instanceof ScorerError || err instanceof DeploymentSettingError)) throw err;
    out.error(`loopwright worker: ${err.message}`);
    return 2;
  }
  installRuntimeLogging('INFO');
  const temporal = await openTemporal(out, { taskQueue: options.taskQueue });
  const connection = await temporal.nativeConnection();
  try {
    const worker = await createWorker({
      connection,
      namespace: temporal.namespace,
      taskQueue: temporal.taskQueue,
      tools,
      scorers,
      ...(options.allowCommand || options.denyCommand ? { activityOptions: { commandRules: { allow: options.allowCommand, deny: options.denyCommand } } } : {}),
      ...(deployment ? { deployment } : {}),
      overrides: { identity: `loopwright-worker-${process.pid}@${os.hostname()}` },
    });
    if (tools.length > 0) out.error(`Custom tools: ${tools.map((t) => t.name).join(', ')}`);
    if (scorers.length > 0) out.error(`Scorers: ${scorers.map((s) => s.name).join(', ')}`);
    if (options.allowCommand) out.error(`Commands allowed in every session: ${options.allowCommand.map((p) => JSON.stringify(p)).join(', ')}`);
    if (options.denyCommand) out.error(`Commands refused in every session: ${options.denyCommand.map((p) => JSON.stringify(p)).join(', ')}`);
    out.error(`Worker polling task queue "${temporal.taskQueue}" on ${temporal.target.address} (namespace ${temporal.namespace}); Ctrl-C to stop`);
    const version = worker.options.workerDeploymentOptions?.useWorkerVersioning ? worker.options.workerDeploymentOptions.version : undefined;
    if (version) out.error(`Build ${version.buildId} of deployment ${version.deploymentName}: sessions stay on the build that started them and move to the current build at a turn boundary`);
    const running = worker.run();
    if (version && options.makeCurrent) {
      try {
        const previous = await makeBuildCurrent(temporal.client, version, { identity: worker.options.identity });
        out.error(
          previous === version.buildId
            ? `Build ${version.buildId} is already current`
            : `Build ${version.buildId} is now current${previous ? ` (was ${previous}; its sessions move here at their next turn)` : ''}`,
        );
      } catch (err) {
        // A worker that was asked to take over and could not stops rather than idling unseen.
        out.error(`loopwright worker: could not make build ${version.buildId} current: ${(err as Error).message}`);
        worker.shutdown();
        await running;
        return 1;
      }
    } else if (version) {
      out.error(
        `New sessions reach this build once it is current: loopwright worker --make-current, or temporal worker deployment set-current-version --deployment-name ${version.deploymentName} --build-id ${version.buildId}`,
      );
    }
    const release = onSignalGracefully((signal) => {
      out.error(`${signal}: stopping the worker once running tasks finish (again to exit at once)`);
      if (worker.getState() === 'RUNNING') worker.shutdown();
    });
    try {
      await running;
    } finally {
      release();
    }
    out.error('Worker stopped');
    return 0;
  } finally {
    await closeDefaultMcpPool();
    await closeNativeConnection(connection);
    await temporal.close();
    // Send the spans still waiting in the batch (when OTEL_* turned tracing on).
    await shutdownTracing();
  }
}
