/**
 * Bundle runtime timings, in process and without Temporal: agent initialisation (bundle, parse,
 * critical actions, system prompt) and the `read_file` and `execute_workflow` tools on the example
 * bundle. Every call's result is checked, so a failing call is never timed as a fast one.
 */
import { initializeAgent, type InitializedAgent } from '../../bundle/initialize-agent';
import { executeWorkflowTool } from '../../activities/tools/execute-workflow';
import { readFileTool } from '../../activities/tools/read-file';
import type { ToolResult } from '../../common/messages';
import { timeRuns, type SampleSummary } from './stats';

/** One timed operation. */
export interface BundleTiming {
  operation: string;
  /** Size of the file read, for the read_file rows. */
  bytes?: number;
  summary: SampleSummary;
}

/** How many calls each operation gets. */
export interface BundleRuntimeCounts {
  initRuns: number;
  readRuns: number;
  workflowRuns: number;
}

/** Time the bundle operations on the bundle at `bundlePath`; also returns the initialised agent. */
export async function measureBundleRuntime(bundlePath: string, agentId: string, counts: BundleRuntimeCounts): Promise<{ timings: BundleTiming[]; agent: InitializedAgent }> {
  const init = () => initializeAgent({ bundlePath, agentId });
  const agent = await init();
  const { context } = agent;
  const timings: BundleTiming[] = [];
  timings.push({
    operation: `initializeAgent (${agentId})`,
    summary: await timeRuns(init, { runs: counts.initRuns, warmup: 20 }),
  });
  for (const file of ['{bundle-root}/config.yaml', '{bundle-root}/workflows/intake/instructions.md']) {
    let bytes = 0;
    const summary = await timeRuns(() => readFileTool(context, { file_path: file }), {
      runs: counts.readRuns,
      warmup: 50,
      check: (result) => {
        expectSuccess(result, `read_file ${file}`);
        bytes = Number(result.size);
      },
    });
    timings.push({ operation: `read_file ${file.replace('{bundle-root}/', '')}`, bytes, summary });
  }
  const workflowPath = '{bundle-root}/workflows/intake/workflow.yaml';
  timings.push({
    operation: 'execute_workflow intake',
    summary: await timeRuns(() => executeWorkflowTool(context, { workflow_path: workflowPath }), {
      runs: counts.workflowRuns,
      warmup: 20,
      check: (result) => expectSuccess(result, 'execute_workflow intake'),
    }),
  });
  return { timings, agent };
}

function expectSuccess(result: ToolResult, what: string): void {
  if (!result.success) throw new Error(`${what} failed: ${result.error ?? 'no error given'}`);
}
