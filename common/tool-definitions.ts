/**
 * The tool definitions sent to the model and the zod schemas that check a call's arguments, both
 * built from the tools' `parameters` (common/tools/), so the model sees exactly what the tools
 * accept. Shared: the activities send and check them, `loopwright inspect` shows them. Workflow
 * code does not import this file (it would bring zod into every session's sandbox).
 */
import { z } from 'zod';
import type { ToolDefinition } from './messages';
import { LOOP_TOOL_SPECS, offeredBuiltIns, TOOL_SPECS } from './tools';
import type { ArgsOf, ToolParameters, ToolSpecBase } from './tools/tool-spec';

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

const schemas = new WeakMap<object, z.ZodType>();

/** The zod schema of a tool's arguments, built once per definition from its `parameters`. */
export function argsSchema<P extends ToolParameters>(spec: ToolSpecBase<P>): z.ZodType<ArgsOf<P>> {
  let schema = schemas.get(spec);
  if (schema === undefined) {
    const shape: Record<string, z.ZodType> = {};
    for (const [key, parameter] of Object.entries(spec.parameters)) {
      let field: z.ZodType;
      if (parameter.type === 'string') field = parameter.nonEmpty ? z.string().min(1) : z.string();
      else if (parameter.type === 'boolean') field = z.boolean();
      else if (parameter.type === 'enum') field = z.enum(parameter.values);
      else field = z.record(z.string(), z.unknown());
      if (parameter.optional) field = field.optional();
      shape[key] = field.describe(parameter.description);
    }
    schema = z.object(shape);
    schemas.set(spec, schema);
  }
  return schema as z.ZodType<ArgsOf<P>>;
}

/** The definition of `spec` as the model is sent it. */
export function toolDefinition(spec: ToolSpecBase): ToolDefinition {
  return { type: 'function', function: { name: spec.name, description: spec.description, parameters: toFunctionParameters(argsSchema(spec)) } };
}

/** The tools that run as activities, in the order the model sees them. */
export const TOOL_DEFINITIONS: ToolDefinition[] = TOOL_SPECS.map(toolDefinition);

/**
 * The built-in tools a session offers: those of `TOOL_DEFINITIONS` its features call for (the
 * skill tool when the project has skills, the command tool when commands are on, the workspace
 * tools with either; see `offeredWhen`).
 */
export function builtInToolDefinitions(features: { skills: boolean; commands?: boolean }): ToolDefinition[] {
  const offered = new Set(offeredBuiltIns(features).map((spec) => spec.name));
  return TOOL_DEFINITIONS.filter((d) => offered.has(d.function.name));
}

/** The loop-breaking tools, offered unless a session turns them off (`loopBreakers: false`). */
export const LOOP_TOOL_DEFINITIONS: ToolDefinition[] = LOOP_TOOL_SPECS.map(toolDefinition);
