/**
 * Where a command may write: the session's write roots, and, when the session writes the folder
 * its BMAD config names as `output_folder` (the default, no output roots of the user's), also the
 * artifact folders that config names: every variable ending in `_artifacts` (`planning_artifacts`,
 * `implementation_artifacts`). Skills' scripts write there, not only `save_output`: BMAD 6.11's
 * `memlog.py` keeps each run's `.memlog.md` under `{output_folder}` (brainstorming, party mode) or
 * `{planning_artifacts}` (ux, deep research, prd), and a project may point those folders apart.
 *
 * A folder joins only when it lies strictly inside the project (after symlinks too), is not one of
 * the bundle's protected paths, and is not inside a root already; a value with a variable left
 * unresolved is skipped. The user's own output roots are kept as they are: they replace the
 * config's folders, for commands too.
 */
import * as path from 'node:path';
import type { RuntimeContext } from '../../common/runtime-context';
import { isInside, protectedPathsOf, resolveRealPath } from '../../bundle/sandbox/path-guard';
import { protectingEntry } from '../../bundle/sandbox/protected-paths';
import { findUnresolved } from '../../bundle/variables';

/** Config variables naming folders a BMAD project's skills write their artifacts to. */
export const ARTIFACT_FOLDER_VARIABLE = /_artifacts$/;

/** The write roots of a command of the session `ctx` (real paths; see the module comment). */
export async function commandWriteRoots(ctx: RuntimeContext): Promise<string[]> {
  const roots = [...ctx.writeRoots];
  const outputFolder = await configFolder(ctx, ctx.variables.output_folder);
  if (outputFolder === undefined || !roots.includes(outputFolder)) return roots;
  const protectedPaths = protectedPathsOf(ctx);
  const names = Object.keys(ctx.variables)
    .filter((name) => ARTIFACT_FOLDER_VARIABLE.test(name))
    .sort();
  for (const name of names) {
    const folder = await configFolder(ctx, ctx.variables[name]);
    if (folder === undefined || !isInside(folder, ctx.projectRoot, true)) continue;
    if (protectingEntry(folder, protectedPaths) !== undefined || roots.some((root) => isInside(folder, root))) continue;
    roots.push(folder);
  }
  return roots;
}

/** The real path of a folder a config value names (relative ones from the project root), when fully resolved and inside the project as written. */
async function configFolder(ctx: RuntimeContext, value: string | undefined): Promise<string | undefined> {
  if (value === undefined || value.trim() === '' || findUnresolved(value).length > 0) return undefined;
  const target = path.resolve(ctx.projectRoot, value);
  if (!isInside(target, ctx.projectRoot)) return undefined;
  return resolveRealPath(target);
}
