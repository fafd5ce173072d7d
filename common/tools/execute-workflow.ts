/** The `execute_workflow` tool: load a workflow and hand the model its configuration, instructions and template. */
import { defineTool } from './tool-spec';

export const EXECUTE_WORKFLOW = defineTool({
  name: 'execute_workflow',
  description:
    'Start a workflow: loads its workflow.yaml, resolves its variables, and returns its instructions, template (if any) and resolved configuration. Then follow the returned instructions step by step.',
  parameters: {
    workflow_path: {
      type: 'string',
      nonEmpty: true,
      description: 'The workflow.yaml to run, for example {bundle-root}/workflows/intake/workflow.yaml.',
    },
    user_input: {
      type: 'object',
      optional: true,
      description: 'Optional inputs the user already gave for this workflow, as key/value pairs.',
    },
  },
  // Loading a workflow reads files and changes nothing.
  access: 'read',
  target: 'workflow_path',
  retries: 'quick',
  promptRules: ['- To run a workflow, call the execute_workflow tool with the path of its workflow.yaml. It returns the workflow configuration, its instructions and its template.'],
});
