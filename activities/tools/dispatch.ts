/**
 * Routes a tool call to its tool by name. The worker registers each tool as its own activity type,
 * from `TOOL_ACTIVITIES`; `TOOLS` and `executeTool` serve callers that run tools outside an
 * activity (tests, benchmarks, an in-process loop).
 */
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import type { ToolName } from '../../common/tool-names';
import { type ToolActivity, type ToolFunction, toToolActivity } from './activity-wrapper';
import { executeWorkflowTool } from './execute-workflow';
import { readFileTool } from './read-file';
import { saveOutputTool } from './save-output';

export { MAX_TOOL_RESULT_BYTES } from './activity-wrapper';

/** The tool functions, by the name the model calls them. */
export const TOOLS: Record<ToolName, ToolFunction> = {
  read_file: readFileTool,
  execute_workflow: executeWorkflowTool,
  save_output: saveOutputTool,
};

/**
 * The tools as activity implementations, by the same names: each heartbeats while it runs, ends at
 * once when its activity is cancelled, and returns an error result instead of one too large for a
 * Temporal payload. The worker registers these.
 */
export const TOOL_ACTIVITIES: Record<ToolName, ToolActivity> = {
  read_file: toToolActivity('read_file', readFileTool),
  execute_workflow: toToolActivity('execute_workflow', executeWorkflowTool),
  save_output: toToolActivity('save_output', saveOutputTool),
};

/** Runs the tool `name` with `args`; an unknown name gives `{success: false, error: 'Unknown tool: <name>'}`. */
export async function executeTool(ctx: RuntimeContext, name: string, args: unknown): Promise<ToolResult> {
  if (!Object.prototype.hasOwnProperty.call(TOOLS, name)) return { success: false, error: `Unknown tool: ${name}` };
  return TOOLS[name as ToolName](ctx, args);
}
