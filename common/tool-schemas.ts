/**
 * Zod schemas of the three tools' arguments. They are the single source of truth: the JSON schemas
 * sent to the model (tool-definitions.ts) are generated from them, and every tool call is checked
 * against them before anything touches the disk.
 */
import { z } from 'zod';

/** Arguments of `read_file`. */
export const readFileArgs = z.object({
  file_path: z
    .string()
    .min(1)
    .describe(
      'File to read. Path variables are allowed and resolved first, for example {bundle-root}/config.yaml or {core-root}/tasks/workflow.xml.',
    ),
});

/** Arguments of `execute_workflow`. */
export const executeWorkflowArgs = z.object({
  workflow_path: z
    .string()
    .min(1)
    .describe('The workflow.yaml to run, for example {bundle-root}/workflows/intake/workflow.yaml.'),
  user_input: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('Optional inputs the user already gave for this workflow, as key/value pairs.'),
});

/** Arguments of `save_output`. */
export const saveOutputArgs = z.object({
  file_path: z
    .string()
    .min(1)
    .describe('Where to write the file, for example {output_folder}/requirements-{date}.md. Must lie inside an output folder.'),
  content: z.string().describe('The full text to write; an existing file at that path is replaced.'),
});

export type ReadFileArgs = z.infer<typeof readFileArgs>;
export type ExecuteWorkflowArgs = z.infer<typeof executeWorkflowArgs>;
export type SaveOutputArgs = z.infer<typeof saveOutputArgs>;

/** What each tool does, told to the model. */
export const TOOL_DESCRIPTIONS = {
  read_file:
    'Read a text file from the bundle, the core or the project and return its content. Call it whenever an instruction says to load or read a file (configuration, template, data, task); do not just say you loaded it.',
  execute_workflow:
    'Start a workflow: loads its workflow.yaml, resolves its variables, and returns its instructions, template (if any) and resolved configuration. Then follow the returned instructions step by step.',
  save_output:
    'Write generated content to a file (for example a finished workflow document). Folders are created as needed; the file is written atomically.',
} as const;
