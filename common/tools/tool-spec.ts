/**
 * The shape of a tool definition. A tool is one object: its name, what the model is told, its
 * parameters, whether it reads or writes, the argument that names its target, its activity's
 * retry class and its rules in the system prompt. Everything else (the JSON schema the model sees,
 * the argument check, the approval policy, local or normal activity, Web UI summaries, progress,
 * previews, the prompt) is derived from it.
 *
 * Pure data: workflow code imports the definitions, and the workflow sandbox gives every session its
 * own copy of each module it imports, so zod stays out (see session-input-schema.ts). The zod schema
 * of the arguments is built from `parameters` on the worker (`argsSchema` in tool-definitions.ts).
 */

/**
 * One parameter, with what the model is told about it: a text, a yes/no flag, one of a few fixed
 * words (`values`, sent as a JSON-schema `enum` of strings, which OpenAI function calling accepts),
 * or a free-form object.
 */
export type ToolParameter =
  | { type: 'string'; description: string; /** Refuse the empty string. */ nonEmpty?: boolean; optional?: boolean }
  | { type: 'boolean'; description: string; optional?: boolean }
  | { type: 'enum'; values: readonly [string, ...string[]]; description: string; optional?: boolean }
  | { type: 'object'; description: string; optional?: boolean };

/** A tool's parameters, by argument name, in the order the model sees them. */
export type ToolParameters = Readonly<Record<string, ToolParameter>>;

type ValueOf<P extends ToolParameter> = P extends { type: 'string' }
  ? string
  : P extends { type: 'boolean' }
    ? boolean
    : P extends { type: 'enum'; values: readonly (infer V)[] }
      ? V
      : Record<string, unknown>;
type RequiredKeys<P extends ToolParameters> = { [K in keyof P]: P[K] extends { optional: true } ? never : K }[keyof P];
type OptionalKeys<P extends ToolParameters> = Exclude<keyof P, RequiredKeys<P>>;

/** The checked arguments of a tool with parameters `P`. */
export type ArgsOf<P extends ToolParameters> = { [K in RequiredKeys<P>]: ValueOf<P[K]> } & { [K in OptionalKeys<P>]?: ValueOf<P[K]> };

/** What every tool definition has. */
export interface ToolSpecBase<P extends ToolParameters = ToolParameters, N extends string = string> {
  /** The name the model calls it by; also its activity type, which the Web UI shows. */
  name: N;
  /** What the tool does, told to the model. */
  description: string;
  parameters: P;
  /**
   * The argument a person recognises a call by (its path): Web UI summaries, approval previews,
   * progress, tracing spans and pruned results show it.
   */
  target?: string;
  /** Lines of the system prompt's "CRITICAL INSTRUCTIONS FOR TOOL USE", in the order of the tool list. */
  promptRules: readonly string[];
}

/** The session features that decide whether a built-in tool is offered. */
export type BuiltInFeature = 'skills' | 'commands';

/** A tool that runs as an activity of its own. */
export interface ToolSpec<P extends ToolParameters = ToolParameters, N extends string = string> extends ToolSpecBase<P, N> {
  /**
   * `read`: no side effects, so it may run as a local activity and is repeated harmlessly. `write`:
   * changes something, so it is always a normal activity and the approval policy `writes` covers it.
   */
  access: 'read' | 'write';
  /**
   * Timeouts and retries of its activity: `quick` (a few short retries; cheap to repeat but
   * pointless to repeat often), `persistent` (longer backoff: the result must not be lost) or
   * `once` (never made again: a call whose worker was lost may or may not have taken effect).
   */
  retries: 'quick' | 'persistent' | 'once';
  /** `required`: every call waits for a person's yes, whatever the session's approval policy. */
  approval?: 'required';
  /**
   * Offered only to sessions with this feature on (`skills`: the project has skills; `commands`:
   * `commands.enabled`); a list means any of them.
   */
  offeredWhen?: BuiltInFeature | readonly BuiltInFeature[];
  /** The argument that carries what is written: summaries show its size, approvals its start. */
  content?: string;
  /**
   * The argument holding the text a write replaces (an edit's old text): approvals show it before
   * `content`, summaries its size, so the person approving sees what changes into what.
   */
  replaces?: string;
  /**
   * The arguments that change how a write acts (an append mode, a replace-every-occurrence flag):
   * summaries and approval previews name those a call gives (a word's value, a flag's name when true).
   */
  modes?: readonly string[];
}

/**
 * A tool that breaks the loop instead of acting: `question` ends the turn with a question for the
 * user (their next message becomes the call's result), `completion` ends it with a summary. The
 * workflow handles them itself; no activity runs. `target` names the argument holding the text.
 */
export interface LoopToolSpec<P extends ToolParameters = ToolParameters, N extends string = string> extends ToolSpecBase<P, N> {
  loop: 'question' | 'completion';
  target: string;
}

/** `target`, `content`, `replaces` and `modes` must name parameters of the tool. */
type NamesParameters<P extends ToolParameters> = {
  target?: keyof P & string;
  content?: keyof P & string;
  replaces?: keyof P & string;
  modes?: readonly (keyof P & string)[];
};

/** Declares a tool, keeping its name and parameters as literal types. */
export function defineTool<const P extends ToolParameters, const N extends string>(spec: ToolSpec<P, N> & NamesParameters<P>): ToolSpec<P, N> {
  return spec;
}

/** Declares a loop-breaking tool, keeping its name and parameters as literal types. */
export function defineLoopTool<const P extends ToolParameters, const N extends string>(spec: LoopToolSpec<P, N> & NamesParameters<P> & { target: keyof P & string }): LoopToolSpec<P, N> {
  return spec;
}

/** `value` as an argument record: itself when it is a JSON object, else `{}`. */
export function argumentRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A tool call's arguments parsed: the JSON value and it as a record, or why the text is not JSON. */
export type ParsedArguments = { ok: true; value: unknown; record: Record<string, unknown> } | { ok: false; error: string };

/** Each call's arguments, parsed once however many places ask (the call objects of a turn are not copied). */
const parsedCalls = new WeakMap<object, ParsedArguments>();

/**
 * The arguments of `call` (an OpenAI-shaped tool call) parsed from the JSON text the model wrote,
 * once per call object: the one parser of the engine, with the one error text a model gets for
 * arguments that are not JSON. Empty text is an empty object.
 */
export function callArguments(call: { function: { name: string; arguments: string } }): ParsedArguments {
  let parsed = parsedCalls.get(call);
  if (parsed === undefined) {
    const text = call.function.arguments;
    try {
      const value: unknown = text.trim() === '' ? {} : JSON.parse(text);
      parsed = { ok: true, value, record: argumentRecord(value) };
    } catch (err) {
      parsed = { ok: false, error: `Arguments for ${call.function.name} are not valid JSON (${(err as Error).message}); send a JSON object` };
    }
    parsedCalls.set(call, parsed);
  }
  return parsed;
}

/** The arguments of `call` as a record (`{}` when they are not a JSON object), parsed once (`callArguments`). */
export function argsOf(call: { function: { name: string; arguments: string } }): Record<string, unknown> {
  const parsed = callArguments(call);
  return parsed.ok ? parsed.record : {};
}

/** The value of `spec`'s target argument in `args`, when it is a string. */
export function targetOf(spec: { target?: string } | undefined, args: Record<string, unknown>): string | undefined {
  const value = spec?.target === undefined ? undefined : args[spec.target];
  return typeof value === 'string' ? value : undefined;
}

/** The value of `spec`'s content argument in `args`, when it is a string. */
export function contentOf(spec: { content?: string } | undefined, args: Record<string, unknown>): string | undefined {
  const value = spec?.content === undefined ? undefined : args[spec.content];
  return typeof value === 'string' ? value : undefined;
}

/** The value of `spec`'s `replaces` argument in `args` (the text a write replaces), when it is a string. */
export function replacedOf(spec: { replaces?: string } | undefined, args: Record<string, unknown>): string | undefined {
  const value = spec?.replaces === undefined ? undefined : args[spec.replaces];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The modes a call gives (`spec.modes`), as a person reads them: a word argument by its value
 * (`append`), a flag by its name when true (`replace_all`); absent, false or other values are left out.
 */
export function modesOf(spec: { modes?: readonly string[] } | undefined, args: Record<string, unknown>): string[] {
  const given: string[] = [];
  for (const name of spec?.modes ?? []) {
    const value = args[name];
    if (typeof value === 'string' && value !== '') given.push(value);
    else if (value === true) given.push(name);
  }
  return given;
}
