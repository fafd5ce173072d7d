/** The tools the model may call. Kept here so workflow code can recognise unknown tools without importing activities. */
export const TOOL_NAMES = ['read_file', 'execute_workflow', 'save_output'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}
