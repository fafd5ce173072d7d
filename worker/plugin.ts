/**
 * `LoopwrightPlugin`: Loopwright on a worker you already have, with your tools and MCP servers, in
 * a few lines (a `@temporalio/plugin` SimplePlugin):
 *
 *   const worker = await Worker.create({
 *     connection, taskQueue: 'loopwright',
 *     plugins: [new LoopwrightPlugin({ tools: [weather], model: { defaultModel: 'gpt-4o-mini' } })],
 *   });
 *
 * It registers the session's activities (model calls, built-in tools, `listTools`, `callMcpTool`),
 * your custom tools, and the batch and eval workflows' activities (with your custom scorers, and the
 * eval's grader on the same model settings), so `loopwright batch` and `loopwright eval` run on it; when the worker has no workflow code of its own it also gets the session
 * workflow (the prebuilt bundle, else the sources). A worker with workflows of its own re-exports
 * Loopwright's in its workflow entry point (`export * from 'loopwright/workflows'`). MCP
 * connections the worker opened are closed when it stops. With `deployment`, the worker runs with
 * Worker Deployment Versioning, sessions pinned to its build (see worker/deployment.ts).
 */
import { Client } from '@temporalio/client';
import { SimplePlugin } from '@temporalio/plugin';
import type { Worker, WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivitiesOptions } from '../activities/session-activities';
import { createBatchActivities } from '../activities/batch-activities';
import { createEvalActivities } from '../activities/eval/eval-activities';
import { createGrader } from '../activities/eval/grader';
import type { Scorer } from '../activities/eval/scorers';
import type { CustomTool } from '../activities/tools/custom-tool';
import { closeDefaultMcpPool } from '../activities/mcp/default-pool';
import { prebuiltWorkflowBundle, WORKFLOWS_PATH } from './workflow-bundle';
import { buildIdOf, type DeploymentOptions, deploymentVersion, versionedWorkerOptions } from './deployment';

/** Settings of the plugin: those of `createActivities`, with the tools at the top. */
export interface LoopwrightPluginOptions extends Omit<ActivitiesOptions, 'client'> {
  /** Custom tools (`defineTool`), offered to every session of this worker. */
  tools?: readonly CustomTool[];
  /** Custom scorers (`defineScorer`) evals may run on this worker (`loopwright eval --scorer`). */
  scorers?: readonly Scorer[];
  /**
   * Worker Deployment Versioning, as `createWorker`'s `deployment`: the deployment (default
   * `loopwright`) and this build's id (default: the package version and a hash of the workflow
   * bundle; a worker that bundles workflow sources of its own at start-up must give one). A
   * `workerDeploymentOptions` of the worker's own wins.
   */
  deployment?: DeploymentOptions;
}

export class LoopwrightPlugin extends SimplePlugin {
  constructor(private readonly settings: LoopwrightPluginOptions = {}) {
    super({ name: 'loopwright' });
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    const base = super.configureWorker(options);
    if (base.connection === undefined) {
      throw new Error("LoopwrightPlugin needs the worker's connection option: sessions read their transcripts through a client on it");
    }
    // Activities read session transcripts through a client on the worker's own connection.
    const client = new Client({ connection: base.connection, ...(base.namespace ? { namespace: base.namespace } : {}), ...(base.dataConverter ? { dataConverter: base.dataConverter } : {}) });
    const { scorers, deployment, ...settings } = this.settings;
    const ours = {
      // As createWorker: the batch and eval workflows' activities beside the session's.
      ...createBatchActivities({ client }),
      ...createEvalActivities({ client, scorers: scorers ?? [], grader: createGrader(settings.model) }),
      ...createActivities({ ...settings, client }),
    };
    const hasWorkflows = base.workflowsPath !== undefined || base.workflowBundle !== undefined;
    const bundle = hasWorkflows ? undefined : prebuiltWorkflowBundle({ traced: false });
    const code = hasWorkflows ? { workflowBundle: base.workflowBundle, workflowsPath: base.workflowsPath } : bundle ? { workflowBundle: bundle } : { workflowsPath: WORKFLOWS_PATH };
    const versioned = deployment && !base.workerDeploymentOptions ? versionedWorkerOptions(deploymentVersion(deployment, () => buildIdOf(code, WORKFLOWS_PATH))) : {};
    return {
      ...base,
      // The worker's own activities win over a name they share with ours.
      activities: { ...ours, ...(base.activities as object | undefined) },
      ...(hasWorkflows ? {} : code),
      ...versioned,
      // As createWorker: heartbeats let a streamed reply's 100 ms batches out as they are sent, and
      // carry an interrupt to a running model call within about a heartbeat.
      maxHeartbeatThrottleInterval: base.maxHeartbeatThrottleInterval ?? '100 milliseconds',
      defaultHeartbeatThrottleInterval: base.defaultHeartbeatThrottleInterval ?? '100 milliseconds',
    };
  }

  override async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    try {
      await super.runWorker(worker, next);
    } finally {
      await closeDefaultMcpPool();
    }
  }
}
