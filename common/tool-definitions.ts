/**
 * The tool definitions sent to the model, generated from the zod schemas so the model sees exactly
 * what the tools accept. Shared: the activities send them, `loopwright inspect` shows them.
 */
import { z } from 'zod';
import type { ToolDefinition } from './messages';
import type { ToolName } from './tool-names';
import { executeWorkflowArgs, readFileArgs, saveOutputArgs, TOOL_DESCRIPTIONS } from './tool-schemas';

/** Argument schema of each tool, by name. */
export const TOOL_SCHEMAS = {
  read_file: readFileArgs,
  execute_workflow: executeWorkflowArgs,
  save_output: saveOutputArgs,
} as const satisfies Record<ToolName, z.ZodType>;

/**
 * Turns a zod object schema into the plain JSON-schema subset OpenAI function calling expects:
 * no `$schema`, no `propertyNames`, and free-form objects spelled `additionalProperties: true`.
 */
export function toFunctionParameters(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  delete json.$schema;
  return simplify(json) as Record<string, unknown>;
}

function simplify(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(simplify);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'propertyNames') continue;
    // zod writes "any value" as `{}`; some OpenAI-compatible servers only understand `true`.
    if (key === 'additionalProperties' && isEmptyObject(value)) {
      out[key] = true;
      continue;
    }
    out[key] = simplify(value);
  }
  return out;
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

function define(name: ToolName): ToolDefinition {
  return {
    type: 'function',
    function: { name, description: TOOL_DESCRIPTIONS[name], parameters: toFunctionParameters(TOOL_SCHEMAS[name]) },
  };
}

/** The three tools, in the order the model sees them. */
export const TOOL_DEFINITIONS: ToolDefinition[] = [define('read_file'), define('execute_workflow'), define('save_output')];

const loopToolSchemas = {
  ask_question: z.object({ question: z.string().min(1).describe('The question for the user, complete and self-contained') }),
  task_completion: z.object({ summary: z.string().min(1).describe('What was done, for the user') }),
} as const;

const LOOP_TOOL_DESCRIPTIONS = {
  ask_question:
    'Ask the user a question and wait for the answer. Use it when you need information or a decision only the user can give (a workflow step that asks the user, a choice between options, missing facts); the answer comes back as this call\'s result.',
  task_completion:
    'Say that the task the user asked for is finished, with a short summary of what was done (files saved, decisions made). The turn ends with your summary as the reply.',
} as const;

/** The loop-breaking tools, offered unless a session turns them off (`loopBreakers: false`). */
export const LOOP_TOOL_DEFINITIONS: ToolDefinition[] = (['ask_question', 'task_completion'] as const).map((name) => ({
  type: 'function',
  function: { name, description: LOOP_TOOL_DESCRIPTIONS[name], parameters: toFunctionParameters(loopToolSchemas[name]) },
}));
