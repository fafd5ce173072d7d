/**
 * Runs an agent's critical actions at initialisation, as the execution spec describes: file loads
 * become `[Critical Action] Loaded file: <path>` system messages (a config's keys become variables
 * for every later action), everything else becomes a `[Critical Instruction] <text>` message with
 * the variables known so far filled in. Only files named by critical actions are read here;
 * workflows, templates and instructions are left for the model to load through tools.
 *
 * What counts as a load, and which files it names, is decided by `load-targets.ts` (from the
 * real BMAD files).
 *
 * A loaded `.yaml`/`.yml` file is a config when its name is `config.yaml`/`config.yml` or the
 * instruction says "set variable(s)"; all its top-level scalar keys become variables (the list
 * after "set variables" is informational: real agents list keys their config lacks). The same file
 * named twice is loaded once. Files are read with `readTextFile` (regular files only, so a FIFO
 * is refused at once; hard links only when the user allows them) through `guardRead` (secret
 * files, by the default list and the session's own rules, only when the user allows them).
 *
 * A named file that does not exist, or whose path holds a variable that does not resolve, does not
 * stop the agent: a `[Critical Action] Could not load file: <path> (<why>)` message takes its place
 * and a line goes to `warnings`; with `strict` it throws `CriticalActionError` instead. Everything
 * else that keeps a file from loading (a path outside the roots, a secret file, a file too large,
 * binary or not regular, a config that does not parse, a variable cycle) throws
 * `CriticalActionError`, unless `keepGoing` (for `inspect`) turns it into a warning too.
 */
import * as path from 'node:path';
import type { SystemMessage } from '../common/messages';
import type { SecretFileRule } from '../common/runtime-context';
import type { AgentDefinition } from './agent-schema';
import type { BundleInfo } from './bundle-loader';
import { BundleError, ConfigVariableNotFoundError, CriticalActionError, inFile, SecurityViolationError } from './errors';
import { errorCode } from './file-errors';
import { ExpansionBudget, SET_VARIABLES, targetsOf } from './load-targets';
import { guardRead } from './sandbox/path-guard';
import { parseYamlSafe } from './safe-yaml';
import { readTextFile } from './text-content';
import { findUnresolved, resolveConfigVariables, resolveVariables } from './variables';

export { fileLoadTargets, isFilePathValue } from './load-targets';

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
  /** Let secret files (`.env*`, keys...) be loaded: the user's own setting, never a bundle's. */
  allowSecretFiles?: boolean;
  /** The project's and the session's secret-file rules, after the default list (see `secret-files.ts`). */
  secretFiles?: SecretFileRule[];
  /** Let files with more than one hard link be loaded: the user's own setting. */
  allowHardLinks?: boolean;
  /** A missing file, or a load path with a variable that does not resolve, throws (default: a warning). */
  strict?: boolean;
  /**
   * Never throw `CriticalActionError`: every problem becomes a warning and the actions go on
   * (`inspect`, which shows an agent whatever is wrong with it). Never set for a session.
   */
  keepGoing?: boolean;
}

/** Messages for the model's context and the variables known after the last action. */
export interface CriticalActionResult {
  messages: SystemMessage[];
  variables: Record<string, string>;
  /** The first config file loaded, if any (also `{config_source}` in `variables`). */
  configPath?: string;
  /** Real paths of the files loaded, in order, without repeats. */
  loadedFiles: string[];
  /** One human-readable line per problem met (`Critical action: could not load <path> (not found)`). */
  warnings: string[];
  /**
   * With `keepGoing`: whether one of the `warnings` would have stopped a session (thrown without
   * `keepGoing`). Always false otherwise, since such a problem throws.
   */
  wouldStop: boolean;
}

/**
 * Most problems reported one by one in a run; the rest are counted in one last line, so a bundle
 * naming thousands of missing files cannot flood the session's history.
 */
export const MAX_REPORTED_LOAD_PROBLEMS = 100;

/** The path a missing-file error names (the guard's real path), else `fallback`. */
function missingPath(error: unknown, fallback: string): string {
  const p = typeof error === 'object' && error !== null && 'path' in error ? (error as { path?: unknown }).path : undefined;
  return typeof p === 'string' && p !== '' ? p : fallback;
}

function spell(variable: string): string {
  return variable.startsWith('config_source:') ? `{config_source}:${variable.slice('config_source:'.length)}` : `{${variable}}`;
}

function firstLine(text: string): string {
  const end = text.search(/\r|\n/);
  return end === -1 ? text : text.slice(0, end);
}

/** Runs the agent's critical actions in order (see the module comment). */
export async function processCriticalActions(agent: AgentDefinition, ctx: CriticalActionContext): Promise<CriticalActionResult> {
  return new CriticalActionRun(ctx).run(agent);
}

/** One run of an agent's critical actions: the state they share. */
class CriticalActionRun {
  private readonly roots: string[];
  private readonly messages: SystemMessage[] = [];
  private readonly loadedFiles: string[] = [];
  private readonly warnings: string[] = [];
  private variables: Record<string, string>;
  private configPath: string | undefined;
  private wouldStop = false;
  private reported = 0;
  private omitted = 0;
  private readonly resolveOptions: { date?: string };

  constructor(private readonly ctx: CriticalActionContext) {
    this.roots = [ctx.bundle.bundleRoot, ctx.bundle.coreRoot, ctx.bundle.projectRoot];
    this.variables = { ...ctx.variables };
    this.resolveOptions = ctx.date !== undefined ? { date: ctx.date } : {};
  }

  async run(agent: AgentDefinition): Promise<CriticalActionResult> {
    for (const instruction of agent.criticalActions) await this.action(instruction);
    if (this.omitted > 0) {
      this.messages.push({ role: 'system', content: `[Critical Action] ${this.omitted} more file(s) could not be loaded` });
      this.warnings.push(`Critical action: ${this.omitted} more problem(s) not listed`);
    }
    return {
      messages: this.messages,
      variables: this.variables,
      ...(this.configPath !== undefined ? { configPath: this.configPath } : {}),
      loadedFiles: this.loadedFiles,
      warnings: this.warnings,
      wouldStop: this.wouldStop,
    };
  }

  private async action(instruction: string): Promise<void> {
    const budget = new ExpansionBudget();
    let targets: string[];
    try {
      targets = targetsOf(instruction, (text) => budget.resolve(text, this.variables, this.resolveOptions));
    } catch (error) {
      // A variable cycle or an expansion over its limit: the action cannot be judged.
      this.fatal(instruction, error, `Critical action: cannot run "${firstLine(instruction)}" (${messageOf(error)})`);
      this.messages.push({ role: 'system', content: `[Critical Instruction] ${instruction}` });
      return;
    }
    if (targets.length === 0) {
      let text: string;
      try {
        text = resolveVariables(instruction, this.variables, this.resolveOptions);
      } catch (error) {
        // A variable cycle or an expansion over its limit: the instruction cannot be given.
        this.fatal(instruction, error, `Critical action: cannot give the instruction "${firstLine(instruction)}" (${messageOf(error)})`);
        text = instruction;
      }
      this.messages.push({ role: 'system', content: `[Critical Instruction] ${text}` });
      return;
    }
    for (const target of targets) {
      if (!(await this.load(instruction, target, budget))) return;
    }
  }

  /** Loads one target; false when the rest of the instruction is to be skipped (keepGoing after a fatal problem). */
  private async load(instruction: string, target: string, budget: ExpansionBudget): Promise<boolean> {
    let resolved: string;
    try {
      resolved = budget.resolve(target, this.variables, { ...this.resolveOptions, strict: true });
    } catch (error) {
      if (error instanceof ConfigVariableNotFoundError) {
        this.couldNotLoad(instruction, error, target, `${this.unresolvedIn(target)} does not resolve`);
        return true;
      }
      this.fatal(instruction, error, `Critical action: could not load ${target} (${messageOf(error)})`, target);
      return false;
    }
    let realPath: string;
    let content: string;
    try {
      realPath = await guardRead(resolved, this.roots, {
        allowSecretFiles: this.ctx.allowSecretFiles === true,
        ...(this.ctx.secretFiles !== undefined ? { secretFiles: this.ctx.secretFiles } : {}),
      });
      if (this.loadedFiles.includes(realPath)) return true;
      const maxBytes = this.ctx.maxReadBytes ?? Number.MAX_SAFE_INTEGER;
      content = (await readTextFile(realPath, maxBytes, undefined, { allowHardLinks: this.ctx.allowHardLinks === true })).content;
    } catch (error) {
      const code = errorCode(error);
      if (!(error instanceof SecurityViolationError) && (code === 'ENOENT' || code === 'ENOTDIR')) {
        this.couldNotLoad(instruction, error, missingPath(error, resolved), 'not found');
        return true;
      }
      // A refusal names the path as written: a path outside the roots is never revealed.
      this.fatal(instruction, error, `Critical action: could not load ${target} (${messageOf(error)})`, target);
      return true;
    }
    this.loadedFiles.push(realPath);
    this.messages.push({ role: 'system', content: `[Critical Action] Loaded file: ${realPath}\n\n${content}` });
    if (isConfig(realPath, instruction)) this.useConfig(instruction, realPath, content);
    return true;
  }

  /** A config's keys become variables; the first config loaded is the config source. */
  private useConfig(instruction: string, realPath: string, content: string): void {
    let own: Record<string, string>;
    try {
      const config = parseConfig(content, realPath);
      own = resolveConfigVariables(config, this.variables, this.resolveOptions);
    } catch (error) {
      // A config that does not parse, a cycle (`output_folder: '{output_folder}/docs'`) or a limit:
      // the config is at fault.
      const cause = error instanceof BundleError ? inFile(error, realPath) : error;
      this.fatal(instruction, cause, `Critical action: config ${realPath} not used (${messageOf(cause)})`);
      return;
    }
    this.variables = { ...this.variables, ...own };
    if (this.configPath === undefined) {
      this.configPath = realPath;
      this.variables.config_source = realPath;
    }
  }

  /** The variables of `target` that do not resolve, spelled as written: `variable {a}`, `variables {a}, {b}`. */
  private unresolvedIn(target: string): string {
    let names: string[];
    try {
      names = findUnresolved(resolveVariables(target, this.variables, this.resolveOptions));
    } catch {
      names = [];
    }
    if (names.length === 0) names = findUnresolved(target);
    return `${names.length === 1 ? 'variable' : 'variables'} ${names.map(spell).join(', ')}`;
  }

  /** A named file that could not be loaded but need not stop the agent: missing, or its path does not resolve. */
  private couldNotLoad(instruction: string, error: unknown, shown: string, why: string): void {
    if (this.ctx.strict && !this.ctx.keepGoing) throw new CriticalActionError(instruction, error, { file: this.ctx.agentFile });
    const stops = this.ctx.strict === true;
    if (stops) this.wouldStop = true;
    this.report(`[Critical Action] Could not load file: ${shown} (${why})`, `Critical action: could not load ${shown} (${why})${stops ? '; a session stops here (strict)' : ''}`);
  }

  /** A problem that stops a session: throws, unless `keepGoing` (then a warning, and a message when a file was named). */
  private fatal(instruction: string, error: unknown, warning: string, target?: string): void {
    if (!this.ctx.keepGoing) throw new CriticalActionError(instruction, error, { file: this.ctx.agentFile });
    this.wouldStop = true;
    const message = target === undefined ? undefined : `[Critical Action] Could not load file: ${target} (${messageOf(error)})`;
    this.report(message, `${warning}; a session stops here`);
  }

  private report(message: string | undefined, warning: string): void {
    if (this.warnings.includes(warning)) return;
    if (this.reported >= MAX_REPORTED_LOAD_PROBLEMS) {
      this.omitted += 1;
      return;
    }
    this.reported += 1;
    if (message !== undefined) this.messages.push({ role: 'system', content: message });
    this.warnings.push(warning);
  }
}

/** The first line of an error's message (a refusal's message never names the path). */
function messageOf(error: unknown): string {
  return firstLine(error instanceof Error ? error.message : String(error));
}

function isConfig(file: string, instruction: string): boolean {
  const base = path.basename(file).toLowerCase();
  if (base === 'config.yaml' || base === 'config.yml') return true;
  return /\.ya?ml$/.test(base) && SET_VARIABLES.test(instruction);
}

function parseConfig(content: string, configFile: string): Record<string, unknown> {
  const parsed = parseYamlSafe(content, configFile);
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`config file ${configFile} is not a mapping of keys to values`);
  }
  return parsed as Record<string, unknown>;
}
