/**
 * Custom tools for workers the command line starts (`loopwright worker --tool-module <module>`, and the
 * worker `run` and `chat` start themselves, through LOOPWRIGHT_TOOL_MODULES): a module's exported
 * `defineTool` results, whether exported one by one, as a `tools` list or as the default export.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CustomTool } from '../activities/tools/custom-tool';

/** A tool module that cannot be loaded or exports no tool; the message names the module. */
export class ToolModuleError extends Error {
  override name = 'ToolModuleError';
  constructor(
    message: string,
    readonly module: string,
  ) {
    super(message);
  }
}

/** Variable naming tool modules for workers the command line starts, separated by commas. */
export const TOOL_MODULES_VARIABLE = 'LOOPWRIGHT_TOOL_MODULES';

/** The modules `LOOPWRIGHT_TOOL_MODULES` names. */
export function toolModulesFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return modulesFromEnv(TOOL_MODULES_VARIABLE, env);
}

/** Loads each module (a path, relative to `cwd`, or a package name) and collects its tools, in order. */
export async function loadToolModules(modules: readonly string[], cwd: string = process.cwd()): Promise<CustomTool[]> {
  const loaded = await loadModuleExports(modules, cwd, { noun: 'Tool', maker: 'defineTool', list: 'tools' }, isCustomTool);
  return loaded.flatMap((m) => m.found);
}

/** The module names the comma-separated variable `variable` lists. */
export function modulesFromEnv(variable: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return (env[variable] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** What a kind of user module exports: `Tool` made by `defineTool`, in a `tools` list. */
export interface ModuleKind {
  noun: string;
  maker: string;
  list: string;
}

/**
 * Loads each module (a path, relative to `cwd`, or a package name) and finds the values `is`
 * accepts among its exports (the default export, the `kind.list` export, then every export; arrays
 * searched, each value once), in order. A module that cannot be loaded or exports none is a
 * `ToolModuleError` naming it.
 */
export async function loadModuleExports<T>(modules: readonly string[], cwd: string, kind: ModuleKind, is: (value: unknown) => value is T): Promise<{ module: string; found: T[] }[]> {
  const loaded: { module: string; found: T[] }[] = [];
  for (const module of modules) {
    const target = module.startsWith('.') || path.isAbsolute(module) ? path.resolve(cwd, module) : module;
    let exported: Record<string, unknown>;
    try {
      exported = (await importModule(target)) as Record<string, unknown>;
    } catch (err) {
      throw new ToolModuleError(`${kind.noun} module ${module} could not be loaded: ${(err as Error).message}`, module);
    }
    const found: T[] = [];
    const add = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(add);
      else if (is(value) && !found.includes(value)) found.push(value);
    };
    add(exported.default);
    add(exported[kind.list]);
    for (const value of Object.values(exported)) add(value);
    if (found.length === 0) {
      throw new ToolModuleError(`${kind.noun} module ${module} exports no ${kind.noun.toLowerCase()} made by ${kind.maker} (export them by name, as "${kind.list}" or as the default export)`, module);
    }
    loaded.push({ module, found });
  }
  return loaded;
}

/** `require` first (CommonJS, and TypeScript under ts-node), else `import()` (ES modules). */
export async function importModule(target: string): Promise<unknown> {
  try {
    // A user's module named at run time: require, not import, so that CommonJS and ts-node both load it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(target) as unknown;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_REQUIRE_ESM') throw err;
    const url = path.isAbsolute(target) ? pathToFileURL(target).href : target;
    return (await import(url)) as unknown;
  }
}

function isCustomTool(value: unknown): value is CustomTool {
  const tool = value as Partial<CustomTool> | null;
  return tool !== null && typeof tool === 'object' && typeof tool.activity === 'function' && tool.offered?.kind === 'custom';
}
