/**
 * Custom scorers for workers the command line starts (`loopwright worker --scorer-module <module>`,
 * and the worker `loopwright eval` starts itself, through LOOPWRIGHT_SCORER_MODULES): a module's
 * exported `defineScorer` results, one by one, as a `scorers` list or as the default export.
 */
import { isScorer, type Scorer } from '../activities/eval/scorers';
import { loadModuleExports, modulesFromEnv, ToolModuleError } from './tool-modules';

/** Variable naming scorer modules for workers the command line starts, separated by commas. */
export const SCORER_MODULES_VARIABLE = 'LOOPWRIGHT_SCORER_MODULES';

/** The modules `LOOPWRIGHT_SCORER_MODULES` names. */
export function scorerModulesFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return modulesFromEnv(SCORER_MODULES_VARIABLE, env);
}

/** Loads each module (a path, relative to `cwd`, or a package name) and collects its scorers, in order; a name given twice is an error. */
export async function loadScorerModules(modules: readonly string[], cwd: string = process.cwd()): Promise<Scorer[]> {
  const scorers: Scorer[] = [];
  for (const { module, found } of await loadModuleExports(modules, cwd, { noun: 'Scorer', maker: 'defineScorer', list: 'scorers' }, isScorer)) {
    for (const scorer of found) {
      if (scorers.some((s) => s.name === scorer.name)) throw new ToolModuleError(`Scorer ${scorer.name} is defined twice (in ${module})`, module);
      scorers.push(scorer);
    }
  }
  return scorers;
}
