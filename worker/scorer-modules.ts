/**
 * Custom scorers for workers the command line starts (`loopwright worker --scorer-module <module>`,
 * and the worker `loopwright eval` starts itself, through LOOPWRIGHT_SCORER_MODULES): a module's
 * exported `defineScorer` results, one by one, as a `scorers` list or as the default export.
 */
import path from 'node:path';
import { isScorer, type Scorer } from '../activities/eval/scorers';
import { importModule, ToolModuleError } from './tool-modules';

/** Variable naming scorer modules for workers the command line starts, separated by commas. */
export const SCORER_MODULES_VARIABLE = 'LOOPWRIGHT_SCORER_MODULES';

/** The modules `LOOPWRIGHT_SCORER_MODULES` names. */
export function scorerModulesFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env[SCORER_MODULES_VARIABLE] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Loads each module (a path, relative to `cwd`, or a package name) and collects its scorers, in order; a name given twice is an error. */
export async function loadScorerModules(modules: readonly string[], cwd: string = process.cwd()): Promise<Scorer[]> {
  const scorers: Scorer[] = [];
  for (const module of modules) {
    const target = module.startsWith('.') || path.isAbsolute(module) ? path.resolve(cwd, module) : module;
    let exported: Record<string, unknown>;
    try {
      exported = (await importModule(target)) as Record<string, unknown>;
    } catch (err) {
      throw new ToolModuleError(`Scorer module ${module} could not be loaded: ${(err as Error).message}`, module);
    }
    const found: Scorer[] = [];
    const add = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(add);
      else if (isScorer(value) && !found.includes(value)) found.push(value);
    };
    add(exported.default);
    add(exported.scorers);
    for (const value of Object.values(exported)) add(value);
    if (found.length === 0) throw new ToolModuleError(`Scorer module ${module} exports no scorer made by defineScorer (export them by name, as "scorers" or as the default export)`, module);
    for (const scorer of found) {
      if (scorers.some((s) => s.name === scorer.name)) throw new ToolModuleError(`Scorer ${scorer.name} is defined twice (in ${module})`, module);
      scorers.push(scorer);
    }
  }
  return scorers;
}
