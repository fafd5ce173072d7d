/** The tools the model may call. Kept here so workflow code can recognise unknown tools without importing activities. */
export const TOOL_NAMES = ['read_file', 'execute_workflow', 'save_output'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

/**
 * Tools that break the loop instead of acting: `ask_question` ends the turn with a question for the
 * user (their next message becomes the call's result), `task_completion` ends it with a summary.
 * The workflow handles them itself; no activity runs.
 */
export const LOOP_TOOL_NAMES = ['ask_question', 'task_completion'] as const;
export type LoopToolName = (typeof LOOP_TOOL_NAMES)[number];

export function isLoopToolName(name: string): name is LoopToolName {
  return (LOOP_TOOL_NAMES as readonly string[]).includes(name);
}
