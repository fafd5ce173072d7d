/**
 * The `execute_workflow` tool: load a workflow (see `loadWorkflow`) and hand the model what it needs
 * to run it: instructions, template and the resolved configuration. The model then follows the
 * steps itself; this tool only loads.
 */
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { EXECUTE_WORKFLOW } from '../../common/tools/execute-workflow';
import { loadWorkflow, spellVariable } from '../../bundle/workflow-loader';
import type { ToolImplementation } from './activity-wrapper';
import { parseArgsOf } from './parse-args';
import { toToolFailure } from './tool-failure';

/**
 * Runs `execute_workflow` for the session `ctx`. Returns
 * `{success: true, workflow_name, description, instructions, template, config, user_input}`, plus
 * `warnings` (strings) when some variables had no value, so the model can ask the user for them;
 * or `{success: false, error}`.
 */
export async function executeWorkflowTool(ctx: RuntimeContext, args: unknown): Promise<ToolResult> {
  const parsed = parseArgsOf(EXECUTE_WORKFLOW, args);
  if (!parsed.ok) return { success: false, error: parsed.error };
  try {
    const workflow = await loadWorkflow(parsed.value.workflow_path, ctx);
    const warnings = [...workflow.warnings.map((w) => `${w.key}: ${w.message}`), ...workflow.unresolved.map((u) => `${u.key}: ${spellVariable(u.variable)} has no value`)];
    return {
      success: true,
      workflow_name: workflow.name,
      description: workflow.description,
      instructions: workflow.instructions,
      template: workflow.template,
      config: workflow.config,
      user_input: parsed.value.user_input ?? {},
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  } catch (error) {
    return toToolFailure(error);
  }
}

/** `execute_workflow`: its definition and what runs it. */
export const executeWorkflow: ToolImplementation = { spec: EXECUTE_WORKFLOW, run: executeWorkflowTool };
