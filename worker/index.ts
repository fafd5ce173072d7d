/**
 * `loopwright/worker`: run Loopwright sessions on a worker. Either let `createWorker` build one, or
 * register Loopwright next to your own workflows and activities:
 *
 *   // workflows.ts (your workflow entry point)
 *   export * from 'loopwright/workflows';
 *   export { myWorkflow } from './my-workflow';
 *
 *   // worker.ts
 *   Worker.create({ workflowsPath: require.resolve('./workflows'),
 *     activities: { ...createActivities({ client, model: { defaultModel: 'gpt-4o-mini' } }), ...myActivities }, ... });
 *
 * @module loopwright/worker
 */
export { createWorker, bundlerLogger, type CreateWorkerOptions } from './create-worker';
export { WORKFLOWS_PATH, prebuiltWorkflowBundle } from './workflow-bundle';
export { resolveWorkerSizing, sizingOptions, WorkerSizingError, type WorkerSizing } from './worker-sizing';
export { createActivities, type ActivitiesOptions, type McpConnections } from '../activities/session-activities';
export { defineTool, ToolError, CustomToolError, type CustomTool, type CustomToolOptions, type ToolContext } from '../activities/tools/custom-tool';
export { LoopwrightPlugin, type LoopwrightPluginOptions } from './plugin';
export { DEFAULT_DEPLOYMENT_NAME, DeploymentSettingError, type DeploymentOptions } from './deployment';
export { makeBuildCurrent, DeploymentVersionNotFoundError } from './current-build';
export { defineScorer, ScorerError, type Scorer, type ScorerInput, type ScorerVerdict } from '../activities/eval/scorers';
export { dataConverterFromEnv } from '../codec/encryption-codec';
export { tracingFromEnv, tracingClientInterceptors, tracingWorkflowInterceptorModules, flushTracing, shutdownTracing, TracingConfigError, type TracingOptions } from './tracing';
