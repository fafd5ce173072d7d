/**
 * What `loopwright validate` checks, without calling a model: every agent parses and initialises
 * (its critical actions load), every command target exists and stays inside the read roots, every
 * workflow a command runs (and, in a stand-alone bundle, every workflow under `workflows/`) loads,
 * with its `config_source`, `instructions` and `template`, every variable resolves, and each
 * workflow's `default_output_file` lies inside the session's output folders.
 *
 * It also reports everything the session's sandbox would refuse, so an unsafe bundle never
 * validates clean: roots that leave the project or are too broad (`UnsafeRootError`), an agent
 * file or manifest entry that leaves the bundle, an output folder that holds the bundle's own
 * files, a default output file that is one of them, a path to a secret file (by the default list
 * and the project's `.loopwright/secret-files`, whose malformed lines are problems too), and an
 * instructions or template file that is not a regular file (a FIFO) or has several hard links.
 *
 * Agent files are read as sessions read them (`readAgentFile`: a `*.agent.yaml` source is compiled
 * with its tree's installer templates), so a source agent's errors name the YAML file and field. A
 * `.md` agent left out because a source of the same id sits beside it is a warning.
 *
 * The tools are checked in validate-tools.ts: an agent's allow-list entry that can only be a mistake
 * is a warning (warnings do not fail validation), a `.mcp.json` a session could not read a problem.
 *
 * Problems are data, not exceptions: the whole bundle is checked and every problem reported with
 * the file and field it concerns. Only unexpected failures (I/O faults) throw.
 */
import { type Dirent, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RuntimeContext } from '../common/runtime-context';
import { readAgentFile } from './agent-file';
import type { AgentDefinition } from './agent-schema';
import { guardAgentFile, listedId, loadBundle, type BundleAgent, type BundleInfo } from './bundle-loader';
import { fileLoadTargets } from './critical-actions';
import { BundleError, BundleLoadError, ConfigVariableNotFoundError, SecurityViolationError } from './errors';
import { errorCode } from './file-errors';
import { DEFAULT_MAX_READ_BYTES, DEFAULT_OUTPUT_FOLDER, initializeAgent, type InitializeAgentInput } from './initialize-agent';
import { LoaderReadCache } from './loader-reads';
import { guardRead, isInside, protectedPathsOf, secretOptionsOf, UnsafeRootError } from './sandbox/path-guard';
import { protectingEntry } from './sandbox/protected-paths';
import { SecretFilesConfigError } from './sandbox/secret-files';
import { fileKindProblem, lexists, secretProblem } from './validate-files';
import { type AgentTools, checkTools } from './validate-tools';
import { findUnresolved, pathVariables, resolveVariables } from './variables';
import { didYouMean } from './skills/project-skills';
import { validateSkill } from './skills/validate-skill';
import { loadWorkflowContent, resolveWorkflow, spellVariable, type ResolvedWorkflow } from './workflow-loader';

/** One problem: the file (relative to the bundle root when inside it), the field in it, what is wrong. */
export interface Problem {
  file: string;
  field: string;
  message: string;
}

/** The problems, the warnings and how much was checked. */
export interface ValidationReport {
  bundleRoot?: string;
  problems: Problem[];
  /** Likely mistakes that would not stop a session (an allow-list entry no tool can match). */
  warnings: Problem[];
  checked: { agents: number; commands: number; workflows: number };
  /** Each agent's allow-list and the built-in tools it is offered. */
  agents: AgentTools[];
}

/**
 * The user's settings a session would run with (see `InitializeAgentInput`), so the bundle is
 * checked against the same roots: `projectRoot`, `outputRoots`, `allowBroadProjectRoot`, ...
 */
export type ValidateOptions = Pick<InitializeAgentInput, 'projectRoot' | 'outputRoots' | 'allowBroadProjectRoot' | 'allowSecretFiles' | 'secretFiles' | 'allowHardLinks'>;

/** Checks the bundle at `bundlePath`; an empty list means no problem was found. */
export async function validateBundle(bundlePath: string, options: ValidateOptions = {}): Promise<Problem[]> {
  return (await checkBundle(bundlePath, options)).problems;
}

/** Like `validateBundle`, with the counts of what was checked. */
export async function checkBundle(bundlePath: string, options: ValidateOptions = {}): Promise<ValidationReport> {
  let bundle: BundleInfo;
  try {
    bundle = await loadBundle(bundlePath, {
      ...(options.projectRoot !== undefined ? { projectRoot: options.projectRoot } : {}),
      ...(options.allowBroadProjectRoot ? { allowBroadProjectRoot: true } : {}),
    });
  } catch (error) {
    return { problems: [problemFrom(error, bundlePath, '')], warnings: [], checked: { agents: 0, commands: 0, workflows: 0 }, agents: [] };
  }
  const run = new Validation(bundle, options);
  let firstContext: RuntimeContext | undefined;
  for (const agent of bundle.agents) {
    const ctx = await run.agent(bundlePath, agent);
    firstContext ??= ctx;
  }
  if (bundle.kind === 'bundle' && firstContext) {
    // Workflows no command names yet are still part of the bundle and may be named later.
    for (const file of await findWorkflowFiles(path.join(bundle.bundleRoot, 'workflows'))) {
      await run.workflow(file, firstContext);
    }
  }
  const tools = await checkTools(bundle);
  for (const problem of tools.problems) run.add(problem);
  const warnings = [
    // Two agent files with one id: the source is listed, the other never runs (see agent-scan.ts).
    ...(bundle.shadowedAgents ?? []).map((s) => ({
      file: run.display(s.file),
      field: 'file',
      message: `Not listed: ${run.display(s.by)} gives the same agent id and is used instead (a *.agent.yaml source wins over a .md agent)`,
    })),
    ...tools.warnings.map((w) => ({ ...w, file: run.display(w.file) })),
    ...(await skillWarnings(bundle, run)),
  ];
  return { bundleRoot: bundle.bundleRoot, problems: run.problems, warnings, checked: run.checked, agents: tools.agents };
}

/**
 * What the Agent Skills specification says of the project's skills (name rules, description length,
 * referenced files that are missing), and what discovery met: warnings, since a client loads a
 * skill leniently (a session runs with it all the same).
 */
async function skillWarnings(bundle: BundleInfo, run: Validation): Promise<Problem[]> {
  const warnings: Problem[] = (bundle.skillWarnings ?? []).map((message) => ({ file: run.display(bundle.projectRoot), field: 'skills', message }));
  for (const skill of bundle.skills ?? []) {
    for (const d of await validateSkill(skill.dir)) warnings.push({ file: run.display(d.file), field: d.field ?? 'SKILL.md', message: d.message });
  }
  return warnings;
}

class Validation {
  readonly problems: Problem[] = [];
  readonly checked = { agents: 0, commands: 0, workflows: 0 };
  private readonly workflows = new Set<string>();
  /** What one agent's start read for its protected paths, for the next agents' (the files are the same). */
  private readonly loaderCache = new LoaderReadCache();

  constructor(
    private readonly bundle: BundleInfo,
    private readonly options: ValidateOptions = {},
  ) {}

  /** Checks one agent; returns its session context when it initialised. */
  async agent(bundlePath: string, entry: BundleAgent): Promise<RuntimeContext | undefined> {
    this.checked.agents += 1;
    const file = this.display(entry.file);
    if (entry.skill !== undefined || entry.builtin) return this.skillAgent(bundlePath, entry, file);
    let agent: AgentDefinition;
    try {
      // The same guard and reader as a session: inside the bundle, a regular file.
      const real = await guardAgentFile(entry.file, this.bundle.bundleRoot, {});
      if (real === undefined) throw new BundleLoadError(`Agent file not found: ${entry.file}`, { file: entry.file, field: 'file' });
      agent = (await readAgentFile(real, this.bundle.bundleRoot, { allowHardLinks: this.options.allowHardLinks === true, file: entry.file })).agent;
    } catch (error) {
      this.add(problemFrom(error, file, 'agent'));
      return undefined;
    }
    const agentId = listedId(this.bundle, entry);
    let ctx: RuntimeContext | undefined;
    try {
      // Strict: a file a critical action names that is missing is a problem here, where a session
      // only warns about it.
      ctx = (await initializeAgent({ ...this.options, bundlePath, agentId, strict: true, loaderCache: this.loaderCache })).context;
    } catch (error) {
      // The agent file is where the fix goes, whatever file the failed action named; an unsafe
      // output folder is fixed in the config that sets it, a bad secret-file rule in its file.
      const problem = problemFrom(error, file, 'critical-actions');
      const ownFile = error instanceof UnsafeRootError || error instanceof SecretFilesConfigError;
      this.add(ownFile && error.file !== undefined ? problem : { ...problem, file });
    }
    if (ctx) {
      this.instructions(agent, ctx, file);
      await this.outputHoldsBundle(ctx, file);
    }
    // Without a working initialisation the commands are still checked, with the path variables
    // alone, so one broken critical action does not hide every other problem.
    await this.commands(agent, ctx ?? this.fallbackContext(), file);
    return ctx;
  }

  /**
   * An agent that is a skill (or Loopwright's own agent of a folder of skills): initialised as a
   * session would (its customization merged, its config and facts loaded), then its menu checked.
   */
  private async skillAgent(bundlePath: string, entry: BundleAgent, file: string): Promise<RuntimeContext | undefined> {
    try {
      const started = await initializeAgent({ ...this.options, bundlePath, agentId: listedId(this.bundle, entry), strict: true, loaderCache: this.loaderCache });
      await this.outputHoldsBundle(started.context, file);
      await this.commands(started.agent, started.context, file);
      return started.context;
    } catch (error) {
      this.add(problemFrom(error, file, 'agent'));
      return undefined;
    }
  }

  /**
   * An output folder that holds the bundle's own files: `save_output` refuses to write over them,
   * but the configuration is a mistake (seen: `output_folder: '{project-root}'`).
   */
  private async outputHoldsBundle(ctx: RuntimeContext, file: string): Promise<void> {
    const protectedPaths = protectedPathsOf(ctx);
    for (const root of ctx.writeRoots) {
      const held: string[] = [];
      for (const p of protectedPaths) {
        if (isInside(p, root) && (await lexists(p)) && !held.includes(p)) held.push(p);
      }
      if (held.length === 0) continue;
      const names = [...new Set(held.map((p) => this.display(p)))].slice(0, 5).join(', ');
      this.add({
        file: ctx.configPath ?? file,
        field: 'output_folder',
        message:
          `Output folder ${this.display(root)} holds the bundle's own files (${names}); save_output refuses to write ` +
          `over them. Point output_folder at a folder of its own, such as {project-root}/docs`,
      });
    }
  }

  /** Variables in critical instructions (not loads: initialisation checked those) must resolve. */
  private instructions(agent: AgentDefinition, ctx: RuntimeContext, file: string): void {
    agent.criticalActions.forEach((action, i) => {
      if (fileLoadTargets(action, ctx.variables).length > 0) return;
      for (const variable of findUnresolved(resolveVariables(action, ctx.variables))) {
        this.add({ file, field: `critical-actions[${i}]`, message: `Variable ${spellVariable(variable)} does not resolve` });
      }
    });
  }

  private async commands(agent: AgentDefinition, ctx: RuntimeContext, file: string): Promise<void> {
    for (const command of agent.commands) {
      this.checked.commands += 1;
      for (const target of command.targets) {
        const field = `commands[${command.cmd}].${target.kind}`;
        if (target.kind === 'action') {
          const id = target.value.startsWith('#') ? target.value.slice(1) : undefined;
          if (id !== undefined && !agent.prompts.some((p) => p.id === id)) {
            this.add({ file, field, message: `No prompt with id "${id}" in the agent` });
          }
          continue;
        }
        if (target.kind === 'skill') {
          const names = (this.bundle.skills ?? []).map((k) => k.name);
          if (!names.includes(target.value)) this.add({ file, field, message: `No skill named ${target.value} in the project's skills folders${didYouMean(target.value, names)}` });
          continue;
        }
        const real = await this.targetPath(target.value, ctx, file, field);
        if (real && (target.kind === 'workflow' || target.kind === 'validate-workflow') && /\.ya?ml$/i.test(real)) {
          await this.workflow(real, ctx);
        }
      }
    }
  }

  /** The context a session would have before any config is loaded. */
  private fallbackContext(): RuntimeContext {
    const { bundleRoot, coreRoot, projectRoot } = this.bundle;
    return {
      bundleRoot,
      coreRoot,
      projectRoot,
      variables: pathVariables({ bundleRoot, coreRoot, projectRoot }),
      readRoots: [...new Set([bundleRoot, coreRoot, projectRoot])],
      writeRoots: [path.join(projectRoot, DEFAULT_OUTPUT_FOLDER)],
      maxReadBytes: DEFAULT_MAX_READ_BYTES,
    };
  }

  /** Resolves and checks a command's path; returns its real path when it exists inside the roots. */
  private async targetPath(value: string, ctx: RuntimeContext, file: string, field: string): Promise<string | undefined> {
    const resolved = resolveVariables(value, ctx.variables);
    const missing = findUnresolved(resolved);
    if (missing.length > 0) {
      this.add({ file, field, message: `Variable ${missing.map(spellVariable).join(', ')} does not resolve in ${value}` });
      return undefined;
    }
    try {
      return await guardRead(resolved, ctx.readRoots, secretOptionsOf(ctx));
    } catch (error) {
      if (error instanceof SecurityViolationError) {
        this.add({ file, field, message: `Path leaves the allowed roots: ${value}` });
      } else if (errorCode(error) === 'ENOENT') {
        this.add({ file, field, message: `File not found: ${this.display(resolved)}` });
      } else if (error instanceof BundleError) {
        // A secret file (`SecretFileError`): the session would refuse it.
        this.add({ file, field, message: error.message });
      } else {
        throw error;
      }
      return undefined;
    }
  }

  /** Loads a workflow (without its content) and reports what does not resolve or exist. */
  async workflow(realPath: string, ctx: RuntimeContext): Promise<void> {
    if (this.workflows.has(realPath)) return;
    this.workflows.add(realPath);
    this.checked.workflows += 1;
    const file = this.display(realPath);
    let workflow: ResolvedWorkflow;
    try {
      workflow = await resolveWorkflow(realPath, ctx);
    } catch (error) {
      this.add(problemFrom(error, file, ''));
      return;
    }
    for (const u of workflow.unresolved) {
      this.add({ file, field: u.key, message: `Variable ${spellVariable(u.variable)} does not resolve` });
    }
    for (const w of workflow.warnings) this.add({ file, field: w.key, message: w.message });
    const output = workflow.config.default_output_file;
    if (typeof output === 'string' && findUnresolved(output).length === 0) {
      const target = path.resolve(ctx.writeRoots[0] ?? ctx.projectRoot, output);
      if (!ctx.writeRoots.some((root) => isInside(target, root))) {
        const roots = ctx.writeRoots.map((r) => this.display(r)).join(', ');
        this.add({
          file,
          field: 'default_output_file',
          message: `Output path is outside the output folders (${roots}): ${this.display(target)}`,
        });
      } else if (protectingEntry(target, protectedPathsOf(ctx)) !== undefined) {
        this.add({
          file,
          field: 'default_output_file',
          message: `Output path is one of the bundle's own files, which save_output never writes: ${this.display(target)}`,
        });
      }
    }
    let loaded: Awaited<ReturnType<typeof loadWorkflowContent>>;
    try {
      loaded = await loadWorkflowContent(workflow, ctx, { skipContent: true });
    } catch (error) {
      // An unresolved variable in instructions/template was already reported above.
      if (!(error instanceof ConfigVariableNotFoundError)) this.add(problemFrom(error, file, ''));
      return;
    }
    const read = Object.entries(loaded.files);
    if (workflow.configSource !== undefined) read.push(['config_source', workflow.configSource]);
    for (const [field, target] of read) {
      const problem = (await secretProblem(target, ctx)) ?? (await fileKindProblem(target, ctx));
      if (problem !== undefined) this.add({ file, field, message: problem });
    }
  }

  /** Records a problem once (several agents sharing a config would report the same one). */
  add(problem: Problem): void {
    const shown = { ...problem, file: this.display(problem.file) };
    const same = (p: Problem) => p.file === shown.file && p.field === shown.field && p.message === shown.message;
    if (!this.problems.some(same)) this.problems.push(shown);
  }

  /** A path relative to the bundle root when inside it (shorter to read), else as given. */
  display(p: string): string {
    return path.isAbsolute(p) && isInside(p, this.bundle.bundleRoot, true) ? path.relative(this.bundle.bundleRoot, p) : p;
  }
}

/** A typed bundle error as a problem (keeping its file and field); anything else is rethrown. */
function problemFrom(error: unknown, file: string, field: string): Problem {
  if (error instanceof BundleError) {
    const line = (error as { line?: number }).line;
    return {
      file: error.file ?? file,
      field: error.field ?? (line !== undefined ? `line ${line}` : field),
      message: error.message,
    };
  }
  throw error;
}

/** Every workflow.yaml below `dir` (none when it does not exist), sorted. */
async function findWorkflowFiles(dir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return [];
    throw error;
  }
  const files = entries.filter((e) => e.isFile() && (e.name === 'workflow.yaml' || e.name === 'workflow.yml')).map((e) => path.join(e.parentPath ?? e.path, e.name));
  return Promise.all(files.sort().map((f) => fs.realpath(f)));
}
