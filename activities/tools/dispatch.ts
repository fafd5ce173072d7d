/**
 * Routes a tool call to its tool by name. The worker registers each tool as its own activity type,
 * from `TOOL_ACTIVITIES`; `TOOLS` and `executeTool` serve callers that run tools outside an
 * activity (tests, benchmarks, an in-process loop).
 */
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import type { ToolName } from '../../common/tools';
import { type ToolActivity, type ToolFunction, type ToolImplementation, toToolActivity } from './activity-wrapper';
import { activateSkill } from './activate-skill';
import { editFile } from './edit-file';
import { executeWorkflow } from './execute-workflow';
import { listFiles } from './list-files';
import { readFile } from './read-file';
import { runCommand } from './run-command';
import { saveOutput } from './save-output';
import { searchFiles } from './search-files';

export { MAX_TOOL_RESULT_BYTES } from './activity-wrapper';

/**
 * The built-in tools' implementations, one for each definition of `TOOL_SPECS` (common/tools/):
 * the only list on the worker that names them.
 */
export const TOOL_IMPLEMENTATIONS: readonly ToolImplementation[] = [readFile, executeWorkflow, saveOutput, editFile, listFiles, searchFiles, activateSkill, runCommand];

/** The tool functions, by the name the model calls them. */
export const TOOLS = Object.fromEntries(TOOL_IMPLEMENTATIONS.map((tool) => [tool.spec.name, tool.run])) as Record<ToolName, ToolFunction>;

/**
 * The tools as activity implementations, by the same names: each heartbeats while it runs, ends at
 * once when its activity is cancelled, and returns an error result instead of one too large for a
 * Temporal payload. The worker registers these.
 */
export const TOOL_ACTIVITIES = Object.fromEntries(TOOL_IMPLEMENTATIONS.map((tool) => [tool.spec.name, toToolActivity(tool.spec.name, tool.run)])) as Record<ToolName, ToolActivity>;

/** Runs the tool `name` with `args`; an unknown name gives `{success: false, error: 'Unknown tool: <name>'}`. */
/** The same wrappers for running inside another activity (inline reads, in the model call). */
export const INLINE_TOOL_ACTIVITIES = Object.fromEntries(TOOL_IMPLEMENTATIONS.map((tool) => [tool.spec.name, toToolActivity(tool.spec.name, tool.run, { inline: true })])) as Record<
  ToolName,
  ToolActivity
>;

export async function executeTool(ctx: RuntimeContext, name: string, args: unknown): Promise<ToolResult> {
  if (!Object.prototype.hasOwnProperty.call(TOOLS, name)) return { success: false, error: `Unknown tool: ${name}` };
  return TOOLS[name as ToolName](ctx, args);
}
