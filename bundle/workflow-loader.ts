/**
 * Loads a workflow on demand (what `execute_workflow` runs): its workflow.yaml, the config its
 * `config_source` names, every variable resolved, and the instruction and template files.
 *
 * Tolerant where real BMAD files need it, strict where a file must be read:
 * - a variable that does not resolve in a field that is only passed on to the model (e.g.
 *   `{config_source}:run_tests_command` when the config has no such key) is left as written and
 *   reported in `unresolved`;
 * - a `config_source` file that does not exist is reported in `warnings`, and `{config_source}:key`
 *   then falls back to the session's variables (the config the agent loaded);
 * - the paths that must be read (the workflow itself, `config_source`, `instructions`, `template`)
 *   go through the path guard, and an unresolved variable in one of them is an error.
 * Instructions are returned as text: many real instruction files are not well-formed XML.
 */
import { BMAD_INSTALL_DEFAULTS } from './skills/skill-session';
import * as path from 'node:path';
import type { RuntimeContext } from '../common/runtime-context';
import { BundleError, ConfigVariableNotFoundError, inFile, SecurityViolationError, YamlSyntaxError } from './errors';
import { errorCode, MODEL_FIXABLE_CODES } from './file-errors';
import { guardRead } from './sandbox/path-guard';
import { secretOptionsOf } from './sandbox/secret-files';
import { parseYamlSafe } from './safe-yaml';
import { readTextFile } from './text-content';
import { findUnresolved, resolveConfigVariables, resolveVariables, resolveWithSiblings } from './variables';

/** A variable that did not resolve: `key` is the field path in workflow.yaml (`variables.story_dir`). */
export interface UnresolvedVariable {
  key: string;
  /** The variable as `findUnresolved` names it: `output_folder`, or `config_source:<key>`. */
  variable: string;
}

/** A workflow.yaml with its variables resolved, before its instructions and template are read. */
export interface ResolvedWorkflow {
  /** Real path of the workflow.yaml. */
  path: string;
  name: string;
  description: string;
  /** The whole workflow.yaml with every variable that could be resolved, resolved. */
  config: Record<string, unknown>;
  /** Real path of the `config_source` file, when it was loaded. */
  configSource?: string;
  /** The variables the workflow was resolved against (session, config source, `installed_path`). */
  variables: Record<string, string>;
  unresolved: UnresolvedVariable[];
  /** Non-fatal problems, e.g. a `config_source` that does not exist. */
  warnings: { key: string; message: string }[];
}

/** A workflow ready to hand to the model. */
export interface LoadedWorkflow extends ResolvedWorkflow {
  /** Text of the instructions file, or null when the workflow names none. */
  instructions: string | null;
  /** Text of the template, or null when there is none (`template: false`, absent). */
  template: string | null;
  /** Real paths of the instructions and template files. */
  files: { instructions?: string; template?: string };
}

/** Options of `resolveWorkflow` and `loadWorkflow`. */
export interface LoadWorkflowOptions {
  /** Value of `{date}` (default today). */
  date?: string;
  /** Check that instructions and template exist inside the roots, but do not read them (used by `validate`). */
  skipContent?: boolean;
}

/** A workflow cannot be loaded: unreadable or malformed workflow.yaml, a missing instructions file... */
export class WorkflowLoadError extends BundleError {}

/** Fields whose value is a file the loader reads. */
const CONTENT_FIELDS = ['instructions', 'template'] as const;

/**
 * Loads the workflow at `workflowPath` (variables allowed, e.g. `{bundle-root}/workflows/x/workflow.yaml`)
 * for the session `ctx`: `resolveWorkflow`, then `loadWorkflowContent`. Throws
 * `SecurityViolationError` for a path outside `ctx.readRoots`, `ConfigVariableNotFoundError` for an
 * unknown variable in a path that must be read, and `WorkflowLoadError` (with `file` and `field`)
 * for files that cannot be read or parsed.
 */
export async function loadWorkflow(workflowPath: string, ctx: RuntimeContext, options: LoadWorkflowOptions = {}): Promise<LoadedWorkflow> {
  return loadWorkflowContent(await resolveWorkflow(workflowPath, ctx, options), ctx, options);
}

/**
 * Reads and resolves a workflow.yaml and its `config_source`, without reading instructions or
 * template, so every unresolved variable is known even when those files are missing.
 */
export async function resolveWorkflow(workflowPath: string, ctx: RuntimeContext, options: LoadWorkflowOptions = {}): Promise<ResolvedWorkflow> {
  const resolveOpts = options.date !== undefined ? { date: options.date } : {};
  let file: string;
  try {
    file = await guardRead(resolveVariables(workflowPath, ctx.variables, { ...resolveOpts, strict: true }), ctx.readRoots, secretOptionsOf(ctx));
  } catch (error) {
    // The workflow path as given is the file (an unknown variable in it, or a missing file).
    rethrowReadError(error, workflowPath, undefined);
  }
  const raw = await readYamlMapping(file, ctx.maxReadBytes, undefined, file);

  // `{installed_path}` defaults to the workflow's own folder; the file's own key wins.
  const base: Record<string, string> = { installed_path: path.dirname(file), ...ctx.variables };
  const warnings: ResolvedWorkflow['warnings'] = [];

  let configSource: { path: string; variables: Record<string, string> } | undefined;
  if (typeof raw.config_source === 'string' && raw.config_source.trim() !== '') {
    const loaded = await loadConfigSource(raw, base, ctx, resolveOpts, file);
    if ('warning' in loaded) warnings.push({ key: 'config_source', message: loaded.warning });
    else {
      configSource = loaded;
      // The workflow's config is more specific than the agent's: its keys become variables too.
      Object.assign(base, loaded.variables, { config_source: loaded.path });
    }
  }

  const config = withFile(file, undefined, () =>
    resolveWithSiblings(raw, base, {
      ...resolveOpts,
      ...(configSource ? { configSource: configSource.variables } : {}),
    }),
  );
  if (config.date === 'system-generated') config.date = resolveVariables('{date}', {}, resolveOpts);

  return {
    path: file,
    name: typeof config.name === 'string' ? config.name : path.basename(path.dirname(file)),
    description: typeof config.description === 'string' ? config.description : '',
    config,
    ...(configSource ? { configSource: configSource.path } : {}),
    variables: base,
    unresolved: collectUnresolved(config),
    warnings,
  };
}

/**
 * Reads the instructions and template a resolved workflow names (absent, null, `false` or empty
 * means none). Each path must resolve fully and pass the read guard.
 */
export async function loadWorkflowContent(workflow: ResolvedWorkflow, ctx: RuntimeContext, options: LoadWorkflowOptions = {}): Promise<LoadedWorkflow> {
  const file = workflow.path;
  const content: Record<(typeof CONTENT_FIELDS)[number], string | null> = { instructions: null, template: null };
  const files: LoadedWorkflow['files'] = {};
  for (const field of CONTENT_FIELDS) {
    const value = workflow.config[field];
    if (value === undefined || value === null || value === false || value === '') continue;
    if (typeof value !== 'string') {
      throw new WorkflowLoadError(`Invalid workflow ${file}: ${field} must be a path or false`, { file, field });
    }
    const missing = findUnresolved(value);
    if (missing.length > 0) {
      const key = missing[0].replace(/^config_source:/, '');
      throw new ConfigVariableNotFoundError(key, Object.keys(workflow.variables), { file, field });
    }
    const target = await guardRead(value, ctx.readRoots, secretOptionsOf(ctx)).catch((error: unknown) => rethrowReadError(error, file, field));
    files[field] = target;
    if (!options.skipContent) content[field] = await readText(target, ctx.maxReadBytes, file, field);
  }
  return { ...workflow, instructions: content.instructions, template: content.template, files };
}

/** Resolves, checks and reads the workflow's `config_source`; a missing file is only a warning. */
async function loadConfigSource(
  raw: Record<string, unknown>,
  base: Record<string, string>,
  ctx: RuntimeContext,
  resolveOpts: { date?: string },
  workflowFile: string,
): Promise<{ path: string; variables: Record<string, string> } | { warning: string }> {
  const resolved = withFile(workflowFile, 'config_source', () => resolveWithSiblings(raw, base, resolveOpts).config_source as string);
  const missing = findUnresolved(resolved);
  if (missing.length > 0) {
    return { warning: `config_source not loaded: variable ${missing.join(', ')} has no value` };
  }
  let file: string;
  try {
    file = await guardRead(resolved, ctx.readRoots, secretOptionsOf(ctx));
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return { warning: `config_source not found: ${resolved}` };
    return rethrowReadError(error, workflowFile, 'config_source');
  }
  const parsed = await readYamlMapping(file, ctx.maxReadBytes, 'config_source', workflowFile);
  // A config of a BMAD install of today that leaves out what its installer defaults (see
  // BMAD_INSTALL_DEFAULTS) has those defaults under its own keys.
  const defaults = file.split(path.sep).includes('_bmad') ? BMAD_INSTALL_DEFAULTS : {};
  // A cycle or a limit in the config's own values: the config file is where the fix goes.
  return { path: file, variables: { ...defaults, ...withFile(file, undefined, () => resolveConfigVariables(parsed, base, resolveOpts)) } };
}

/** Runs `fn`, giving a bundle error it throws the file (and field) it happened in. */
function withFile<T>(file: string, field: string | undefined, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof BundleError) throw inFile(error, file, field);
    throw error;
  }
}

/** A variable as written in a file: `{output_folder}`, or `{config_source}:key` for `config_source:key`. */
export function spellVariable(variable: string): string {
  return variable.startsWith('config_source:') ? `{config_source}:${variable.slice('config_source:'.length)}` : `{${variable}}`;
}

/** Every `{variable}` left in a string of `value`, with the field path where it sits. */
function collectUnresolved(value: unknown, key = ''): UnresolvedVariable[] {
  if (typeof value === 'string') return findUnresolved(value).map((variable) => ({ key, variable }));
  if (Array.isArray(value)) return value.flatMap((item, i) => collectUnresolved(item, `${key}[${i}]`));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([k, item]) => collectUnresolved(item, key === '' ? k : `${key}.${k}`));
  }
  return [];
}

async function readYamlMapping(file: string, maxBytes: number, field: string | undefined, workflowFile: string): Promise<Record<string, unknown>> {
  const text = await readText(file, maxBytes, workflowFile, field);
  let parsed: unknown;
  try {
    parsed = parseYamlSafe(text, file);
  } catch (error) {
    // Its message is "Invalid YAML in <file>: ..."; limits (`LimitExceededError`) pass through.
    if (error instanceof YamlSyntaxError) throw new WorkflowLoadError(error.message, { file: workflowFile, field, cause: error });
    if (error instanceof BundleError) throw inFile(error, file, field);
    throw error;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new WorkflowLoadError(`Invalid YAML in ${file}: expected a mapping of keys to values`, { file: workflowFile, field });
  }
  return parsed as Record<string, unknown>;
}

async function readText(file: string, maxBytes: number, workflowFile: string, field: string | undefined): Promise<string> {
  try {
    return (await readTextFile(file, maxBytes)).content;
  } catch (error) {
    return rethrowReadError(error, workflowFile, field);
  }
}

/**
 * Typed errors pass through (gaining the workflow file and field when they lack them); a
 * file-system error the model could act on (the guard ran first, so its path is inside the roots)
 * becomes a `WorkflowLoadError`; anything else (an I/O fault) is rethrown as is, to be retried.
 */
function rethrowReadError(error: unknown, workflowFile: string | undefined, field: string | undefined): never {
  if (error instanceof BundleError) {
    if (!(error instanceof SecurityViolationError) && workflowFile !== undefined) inFile(error, workflowFile, field);
    throw error;
  }
  if (MODEL_FIXABLE_CODES.has(errorCode(error) ?? '')) {
    const what = field === undefined ? 'workflow' : `${field} of workflow ${workflowFile}`;
    throw new WorkflowLoadError(`Cannot read ${what}: ${(error as Error).message}`, {
      file: workflowFile,
      field,
      cause: error,
    });
  }
  throw error;
}
