/**
 * Checks a tool call's arguments against its zod schema. A bad argument is the model's mistake, so
 * it becomes an error message the model can act on (naming the field), never an exception.
 */
import type { z } from 'zod';
import { argsSchema } from '../../common/tool-definitions';
import { type ArgsOf, callArguments, type ToolParameters, type ToolSpecBase } from '../../common/tools/tool-spec';

/** Either the typed arguments or a message that names what is wrong. */
export type ParsedArgs<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Validates `args` against `schema`: the call's arguments as the engine parsed them (once, by
 * `callArguments` in common/tools/tool-spec.ts), or JSON text, which goes through that same parser.
 * The error names each bad field, e.g. `Invalid arguments for read_file: file_path: expected a string, received number`.
 */
export function parseToolArgs<S extends z.ZodType>(tool: string, schema: S, args: unknown): ParsedArgs<z.infer<S>> {
  let input = args;
  if (typeof args === 'string') {
    const parsed = callArguments({ function: { name: tool, arguments: args } });
    if (!parsed.ok) return parsed;
    input = parsed.value;
  }
  if (input === undefined || input === null) input = {};
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return { ok: true, value: result.data };
  const problems = result.error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : '(arguments)';
    return `${field}: ${describeIssue(issue)}`;
  });
  return { ok: false, error: `Invalid arguments for ${tool}: ${problems.join('; ')}` };
}

/** `parseToolArgs` with the tool's own name and the schema built from its parameters. */
export function parseArgsOf<P extends ToolParameters>(spec: ToolSpecBase<P>, args: unknown): ParsedArgs<ArgsOf<P>> {
  return parseToolArgs(spec.name, argsSchema(spec), args);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type') {
    // zod calls a key/value object a "record"; the model only knows JSON objects.
    const expected = issue.expected === 'record' ? 'object' : issue.expected;
    if (issue.input === undefined) return `required ${expected} is missing`;
    return `expected ${expected}, received ${kindOf(issue.input)}`;
  }
  if (issue.code === 'too_small' && issue.origin === 'string') return 'must not be empty';
  return issue.message;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
