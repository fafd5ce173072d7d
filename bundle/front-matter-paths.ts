/**
 * The paths a Markdown file's front matter names, resolved, for `read_file` to return beside the
 * file. BMAD's step-file workflows (6.0 onward) keep their own variables there: a step says
 * `nextStepFile: './step-02-discovery.md'` and `outputFile: '{planning_artifacts}/prd.md'`, and its
 * body refers to `{nextStepFile}`. A relative path is relative to the step file; the model would
 * otherwise have to work that out from the file's location, and a wrong guess loads the wrong step.
 */
import * as path from 'node:path';
import { parseYamlSafe } from './safe-yaml';
import { splitFrontMatter } from './skills/skill-file';
import { findUnresolved, resolveVariables } from './variables';

/** Largest front matter looked at. */
const MAX_FRONT_MATTER_CHARS = 16 * 1024;
/** Most entries returned. */
const MAX_PATH_ENTRIES = 40;

/**
 * The front-matter entries of the Markdown `content` of `file` (absolute) whose values are paths:
 * `./x`, `../x` (resolved from the file's folder) or values that start with a path variable
 * (`{planning_artifacts}/prd.md`, `{project-root}/...`), resolved with `variables` when every
 * variable in them is known. Undefined when there are none (or the file has no front matter).
 */
export function frontMatterPaths(file: string, content: string, variables: Record<string, string>): Record<string, string> | undefined {
  if (!/\.md$/i.test(file)) return undefined;
  const split = splitFrontMatter(content);
  if (split === undefined || split.yaml.length > MAX_FRONT_MATTER_CHARS) return undefined;
  let data: unknown;
  try {
    data = parseYamlSafe(split.yaml, file);
  } catch {
    return undefined;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (Object.keys(out).length >= MAX_PATH_ENTRIES) break;
    if (typeof value !== 'string') continue;
    const resolved = pathValue(value.trim(), path.dirname(file), variables);
    if (resolved !== undefined) out[key] = resolved;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function pathValue(value: string, folder: string, variables: Record<string, string>): string | undefined {
  if (value.startsWith('./') || value.startsWith('../')) return path.resolve(folder, value);
  if (!/^\{[\w-]+\}[/\\]/.test(value)) return undefined;
  let resolved: string;
  try {
    resolved = resolveVariables(value, variables);
  } catch {
    return undefined;
  }
  return findUnresolved(resolved).length === 0 ? path.resolve(resolved) : undefined;
}
