/**
 * Runs an agent's critical actions at initialisation, as the execution spec describes: file loads
 * become `[Critical Action] Loaded file: <path>` system messages (a config's keys become variables
 * for every later action), everything else becomes a `[Critical Instruction] <text>` message with
 * the variables known so far filled in. Only files named by critical actions are read here;
 * workflows, templates and instructions are left for the model to load through tools.
 *
 * What counts as a load (decided from the real BMAD files):
 * - a line of the instruction that starts with the verb "Load" (after list markers, emoji, or a
 *   `CRITICAL:`-style label) and names at least one file: "Load into memory {path} and set
 *   variables: a, b", "... set variable a, b", "... set variables", "Load COMPLETE file {path} into
 *   permanent memory", a compiled step's "- Load and read {path} NOW";
 * - a file is a token starting with a `{variable}` or a relative path with a known extension; a
 *   token ending in `/` is a folder ("Load the referenced fragment(s) from `{...}/knowledge/`"
 *   is guidance for later, not a load), and the names after "set variable(s)" are not paths;
 * - "Load persona from this current agent file" names no file, so it stays an instruction.
 *
 * A loaded `.yaml`/`.yml` file is a config when its name is `config.yaml`/`config.yml` or the
 * instruction says "set variable(s)"; all its top-level scalar keys become variables (the list
 * after "set variables" is informational: real agents list keys their config lacks). The same file
 * named twice is loaded once. A file that cannot be loaded (missing, outside the roots, too big,
 * a config that does not parse, a path with an unknown variable) throws `CriticalActionError`.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { SystemMessage } from '../../common/messages';
import type { AgentDefinition } from './agent-schema';
import type { BundleInfo } from './bundle-loader';
import { CriticalActionError } from './errors';
import { guardRead } from './path-guard';
import { resolveConfigVariables, resolveVariables } from './variables';

/** What critical actions need besides the agent. */
export interface CriticalActionContext {
  bundle: BundleInfo;
  /** The agent file (absolute); kept for error reports. */
  agentFile: string;
  /** Variables known before the first action: the path variables, usually. */
  variables: Record<string, string>;
  /** Value of `{date}` (default today). */
  date?: string;
  /** Largest file a critical action may load, in bytes (default: no limit beyond memory). */
  maxReadBytes?: number;
}

/** Messages for the model's context and the variables known after the last action. */
export interface CriticalActionResult {
  messages: SystemMessage[];
  variables: Record<string, string>;
  /** The first config file loaded, if any (also `{config_source}` in `variables`). */
  configPath?: string;
  /** Real paths of the files loaded, in order, without repeats. */
  loadedFiles: string[];
}

const LOAD_LINE = /^[\s\-*•>#\d.)]*(?:[^\p{L}\p{N}{\s]+\s*)*(?:[A-Z][A-Z ]*:\s*)?load\b(.*)$/iu;
const PATH_TOKEN = /\{[A-Za-z0-9_-]+\}[^\s`'"<>,;()]*|(?:\.{1,2}\/)?[\w.-]+(?:\/[\w.-]+)*\.(?:ya?ml|md|xml|csv|json|txt)\b/g;
const SET_VARIABLES = /\bset\s+variables?\b|\bsession variables\b/i;

/**
 * The files an instruction asks to load, as written (variables unresolved); empty when it is not a
 * load instruction. Exported for `inspect`/`validate` and tests.
 */
export function fileLoadTargets(instruction: string): string[] {
  const targets: string[] = [];
  for (const line of instruction.split('\n')) {
    const match = LOAD_LINE.exec(line);
    if (!match) continue;
    // Only what comes before "and set variable(s)" can be a file; after it are variable names.
    const rest = match[1].split(/\band\s+set\s+variables?\b/i)[0];
    for (const raw of rest.match(PATH_TOKEN) ?? []) {
      const token = raw.replace(/[.:!?]+$/, '');
      if (token.endsWith('/')) continue;
      const isPath = token.includes('/') || /\.[A-Za-z0-9]+$/.test(token) || token === '{config_source}';
      if (isPath && !targets.includes(token)) targets.push(token);
    }
  }
  return targets;
}

/** Runs the agent's critical actions in order (see the module comment). */
export async function processCriticalActions(
  agent: AgentDefinition,
  ctx: CriticalActionContext,
): Promise<CriticalActionResult> {
  const roots = [ctx.bundle.bundleRoot, ctx.bundle.coreRoot, ctx.bundle.projectRoot];
  const messages: SystemMessage[] = [];
  const loadedFiles: string[] = [];
  let variables = { ...ctx.variables };
  let configPath: string | undefined;
  const resolveOptions = ctx.date !== undefined ? { date: ctx.date } : {};

  for (const instruction of agent.criticalActions) {
    const targets = fileLoadTargets(instruction);
    if (targets.length === 0) {
      const text = resolveVariables(instruction, variables, resolveOptions);
      messages.push({ role: 'system', content: `[Critical Instruction] ${text}` });
      continue;
    }
    for (const target of targets) {
      let realPath: string;
      let content: string;
      try {
        const resolved = resolveVariables(target, variables, { ...resolveOptions, strict: true });
        realPath = await guardRead(resolved, roots);
        if (loadedFiles.includes(realPath)) continue;
        content = await readLimited(realPath, ctx.maxReadBytes);
      } catch (error) {
        throw new CriticalActionError(instruction, error, { file: ctx.agentFile });
      }
      loadedFiles.push(realPath);
      messages.push({ role: 'system', content: `[Critical Action] Loaded file: ${realPath}\n\n${content}` });

      if (isConfig(realPath, instruction)) {
        const config = parseConfig(content, instruction, ctx.agentFile);
        variables = { ...variables, ...resolveConfigVariables(config, variables, resolveOptions) };
        if (configPath === undefined) {
          configPath = realPath;
          variables.config_source = realPath;
        }
      }
    }
  }
  return { messages, variables, ...(configPath !== undefined ? { configPath } : {}), loadedFiles };
}

function isConfig(file: string, instruction: string): boolean {
  const base = path.basename(file).toLowerCase();
  if (base === 'config.yaml' || base === 'config.yml') return true;
  return /\.ya?ml$/.test(base) && SET_VARIABLES.test(instruction);
}

function parseConfig(content: string, instruction: string, agentFile: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = parseYaml(content);
  } catch (error) {
    throw new CriticalActionError(instruction, error, { file: agentFile });
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CriticalActionError(instruction, new Error('config file is not a mapping of keys to values'), { file: agentFile });
  }
  return parsed as Record<string, unknown>;
}

async function readLimited(file: string, maxBytes: number | undefined): Promise<string> {
  if (maxBytes !== undefined) {
    const { size } = await fs.stat(file);
    if (size > maxBytes) throw new Error(`File is too large: ${size} bytes (limit ${maxBytes})`);
  }
  return fs.readFile(file, 'utf8');
}
