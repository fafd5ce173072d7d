/**
 * Routes a tool call to its tool by name. The worker registers each tool as its own activity type;
 * this router serves callers that hold only a name (tests, benchmarks, an in-process loop).
 */
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import type { ToolName } from '../../common/tool-names';
import { executeWorkflowTool } from './execute-workflow';
import { readFileTool } from './read-file';
import { saveOutputTool } from './save-output';

/** The tool functions, by the name the model calls them. */
export const TOOLS: Record<ToolName, (ctx: RuntimeContext, args: unknown) => Promise<ToolResult>> = {
  read_file: readFileTool,
  execute_workflow: executeWorkflowTool,
  save_output: saveOutputTool,
};

/** Runs the tool `name` with `args`; an unknown name gives `{success: false, error: 'Unknown tool: <name>'}`. */
export async function executeTool(ctx: RuntimeContext, name: string, args: unknown): Promise<ToolResult> {
  if (!Object.prototype.hasOwnProperty.call(TOOLS, name)) return { success: false, error: `Unknown tool: ${name}` };
  return TOOLS[name as ToolName](ctx, args);
}
