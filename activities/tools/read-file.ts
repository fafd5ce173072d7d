/**
 * The `read_file` tool: resolve the path's variables, check it against the read roots, and return
 * the file's text. Every expected failure is a result for the model, never an exception.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { READ_FILE } from '../../common/tools/read-file';
import { guardRead, isInside, secretOptionsOf } from '../../bundle/sandbox/path-guard';
import { frontMatterPaths } from '../../bundle/front-matter-paths';
import { readTextFile } from '../../bundle/text-content';
import { resolveVariables } from '../../bundle/variables';
import type { ToolImplementation, ToolRunOptions } from './activity-wrapper';
import { parseArgsOf } from './parse-args';
import { toToolFailure } from './tool-failure';

/**
 * Runs `read_file` for the session `ctx`: returns `{success: true, path, content, size}` (`path` is
 * the real path, `size` in bytes; for a Markdown file whose front matter names paths, also
 * `frontMatterPaths`, see front-matter-paths.ts) or `{success: false, error}`. Relative paths are taken from the
 * bundle root. Refuses files over `ctx.maxReadBytes`, binary files, anything but a regular file
 * (a FIFO, socket or device, at once), files with several hard links unless `ctx.allowHardLinks`,
 * and secret files (the default list of `bundle/sandbox/secret-files.ts`, then the project's and session's
 * rules recorded in `ctx.secretFiles`) unless `ctx.allowSecretFiles`. When
 * `options.signal` is aborted the read stops and the signal's reason is thrown (a cancellation is
 * never a result).
 */
export async function readFileTool(ctx: RuntimeContext, args: unknown, options: ToolRunOptions = {}): Promise<ToolResult> {
  const parsed = parseArgsOf(READ_FILE, args);
  if (!parsed.ok) return { success: false, error: parsed.error };
  let realPath: string | undefined;
  try {
    // Strict: a path with an unknown variable would otherwise be read literally and fail obscurely.
    const resolved = await inActiveSkill(resolveVariables(parsed.value.file_path, ctx.variables, { strict: true }), ctx.activeSkills);
    realPath = await guardRead(resolved, readRootsOf(ctx), secretOptionsOf(ctx));
    const { content, size } = await readTextFile(realPath, ctx.maxReadBytes, options.signal, {
      allowHardLinks: ctx.allowHardLinks === true,
    });
    // A step file's own path variables (nextStepFile: './step-02.md'), resolved from where it lies.
    const paths = frontMatterPaths(realPath, content, ctx.variables);
    return { success: true, path: realPath, content, size, ...(paths ? { frontMatterPaths: paths } : {}) };
  } catch (error) {
    // `realPath` is set only once the guard accepted it, so an outside path is never echoed.
    return toToolFailure(error, realPath);
  }
}

/**
 * A relative path as the active skills give it (tier 3 of progressive disclosure: a skill's bare
 * paths, `references/guide.md`, resolve from its folder): the first active skill, newest first,
 * whose folder holds it; otherwise the path unchanged (taken from the bundle root, as before).
 */
async function inActiveSkill(resolved: string, skills: RuntimeContext['activeSkills']): Promise<string> {
  if (path.isAbsolute(resolved) || skills === undefined) return resolved;
  for (const skill of skills) {
    const candidate = path.join(skill.dir, resolved);
    if (!isInside(candidate, skill.dir)) continue;
    try {
      await fs.access(candidate);
      return candidate;
    } catch {
      // Not in this skill: try the next, then the bundle root.
    }
  }
  return resolved;
}

/** The roots a read may touch: the session's, and its skills folders (a user's skills lie outside the project). */
export function readRootsOf(ctx: RuntimeContext): string[] {
  return ctx.skillFolders === undefined ? ctx.readRoots : [...ctx.readRoots, ...ctx.skillFolders];
}

/** `read_file`: its definition and what runs it. */
export const readFile: ToolImplementation = { spec: READ_FILE, run: readFileTool };
