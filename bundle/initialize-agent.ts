/**
 * Agent initialisation, the first activity of a session: load the bundle, parse the agent, run its
 * critical actions, build the system prompt, and hand back everything the tools will need as a
 * `RuntimeContext` (plain data, recorded in the workflow history).
 */
import * as path from 'node:path';
import type { SystemMessage } from '../common/messages';
import type { RuntimeContext, SecretFileRule, CommandSettings } from '../common/runtime-context';
import { readAgentFile } from './agent-file';
import type { AgentDefinition } from './agent-schema';
import { type BundleAgent, type BundleInfo, findAgent, loadBundle, type LoadBundleOptions } from './bundle-loader';
import { bundleCommandRules } from './bundle-command-rules';
import { mergeCommandRules } from '../common/commands/command-rules';
import { CENTRAL_CONFIG_LAYERS, readModuleVariables } from './skills/bmad-config';
import { projectCatalog } from './skills/project-skills';
import { filesHash, skillPinFiles } from './skills/pins';
import type { AgentPin } from '../common/pins';
import { readSkillAgent } from './skills/skill-agent';
import { BMAD_INSTALL_DEFAULTS, builtinSkillsAgent, configMessage, loadPersistentFacts } from './skills/skill-session';
import { type CriticalActionResult, processCriticalActions } from './critical-actions';
import { BundleError } from './errors';
import { type LoaderReadCache, protectedPathsFor } from './loader-reads';
import { isInside, resolveRealPath, UnsafeRootError } from './sandbox/path-guard';
import { protectingEntry } from './sandbox/protected-paths';
import { loadSecretFileRules } from './sandbox/secret-file-overrides';
import { subagentAgent, subagentInstructions } from './subagent';
import { buildSystemPrompt } from './system-prompt';
import type { SubagentSpec } from '../common/delegation-types';
import { findUnresolved, pathVariables, resolveConfigVariables } from './variables';

/** Largest file `read_file` returns unless configured otherwise: 1 MiB. */
export const DEFAULT_MAX_READ_BYTES = 1024 * 1024;

/** Output folder, relative to the project root, when neither `outputRoots` nor `output_folder` says. */
export const DEFAULT_OUTPUT_FOLDER = 'output';

/** Input of `initializeAgent`. */
export interface InitializeAgentInput {
  /** Bundle folder, installed project, its `bmad/` folder or a module folder (see `loadBundle`). */
  bundlePath: string;
  /** Agent id, file name or manifest id (see `findAgent`); empty for the bundle's entry point. */
  agentId: string;
  /** Largest file `read_file` returns, in bytes (default `DEFAULT_MAX_READ_BYTES`). */
  maxReadBytes?: number;
  /**
   * Folders `save_output` may write to (the user's own setting; the only way to write outside the
   * project). Relative ones are taken from the project root and must stay inside it.
   */
  outputRoots?: string[];
  /**
   * `{project-root}` of a stand-alone bundle: absolute (the folder the user runs loopwright from).
   * Without it a stand-alone bundle is its own project root. An installed tree, and a bundle inside
   * one, keep the folder holding `bmad/`.
   */
  projectRoot?: string;
  /** Accept `/`, the home folder or a folder above it as a root (refused otherwise). The user's say-so only. */
  allowBroadProjectRoot?: boolean;
  /** Offer the user's own skills too, after the project's. */
  userSkills?: boolean;
  /** Commands are on: the runtime context carries how they run, and the prompt gets the command tool's rules. */
  commands?: CommandSettings;
  /** More skills folders (absolute), after the project's. */
  skillFolders?: string[];
  /** Let the tools read and write secret files (credentials, keys, `.env*`, `.git/`; see `secret-files.ts`). */
  allowSecretFiles?: boolean;
  /**
   * The session's own secret-file rules, one gitignore-style line each (`*.secret`, `!docs/x.pem`),
   * applied after the default list and the project's `.loopwright/secret-files`.
   */
  secretFiles?: string[];
  /** Let the tools read files with more than one hard link. */
  allowHardLinks?: boolean;
  /**
   * A subagent (`run_subagent`): the session's agent is made of these instructions instead of the
   * bundle's agent `agentId`, which still gives the project, its config and skills.
   */
  subagent?: SubagentSpec;
  /** Value of `{date}` during initialisation (default today). */
  date?: string;
  /**
   * What earlier starts of the same run read: the bundle, and what its protected paths need
   * (`validate` starts every agent of a bundle with one); a session never has one.
   */
  loaderCache?: LoaderReadCache;
  /**
   * Fail (`CriticalActionError`) when a file a critical action names does not exist or its path
   * does not resolve. By default the session starts without it: the model gets a
   * `[Critical Action] Could not load file: <path> (not found)` message in its place and the
   * problem is one of `warnings`.
   */
  strict?: boolean;
}

/** The parsed agent, its opening messages (system prompt first) and the tools' context. */
export interface InitializedAgent {
  agent: AgentDefinition;
  messages: SystemMessage[];
  context: RuntimeContext;
  /** The files the agent was read from and their content hash (bundle pinning, common/pins.ts); none for Loopwright's own agent. */
  pin?: AgentPin;
  /**
   * Problems that did not stop initialisation, one human-readable line each (empty when none):
   * `Critical action: could not load <path> (not found)`.
   */
  warnings: string[];
}

/**
 * What `initializeAgentForInspection` returns: the agent as a session would start it, with every
 * problem met in `warnings`, and whether a session would have stopped at one of them.
 */
export interface InspectedInitialization extends InitializedAgent {
  /** True when a session would not start: a problem in `warnings` throws in `initializeAgent`. */
  wouldStop: boolean;
  /** The bundle the agent was found in, as `loadBundle` loaded it (inspect shows it too, without loading it again). */
  bundle: BundleInfo;
}

/**
 * Initialises an agent. Throws a `BundleError` subclass when the bundle, the agent file or a
 * critical action is at fault (`BundleLoadError`, `AgentNotFoundError`, `AgentParseError`,
 * `CriticalActionError`), or when a root cannot be trusted (`UnsafeRootError`). A file a critical
 * action names that does not exist (or whose path does not resolve) is a warning, not an error,
 * unless `input.strict`; a path outside the roots always throws.
 *
 * Write roots, in order of preference: `outputRoots` when given (the user's choice: absolute ones
 * anywhere, relative ones inside the project); else the `output_folder` config variable when it
 * resolved fully (real BMAD configs set it to `{project-root}/docs`, where the agents' workflows
 * write); else `<projectRoot>/output`. A write root that comes from the bundle (the last two) must
 * lie inside the project root after resolving symlinks, and not inside the bundle's own files:
 * otherwise initialisation fails, before the model runs. Read roots are the bundle, core and
 * project roots. All roots are real paths. `variables` holds the path variables plus every config
 * key loaded. `protectedPaths` lists every file the bundle loader would read next time, which
 * `save_output` never writes (see `protected-paths.ts`). `secretFiles` records the project's
 * `.loopwright/secret-files` and the session's `secretFiles` (`SecretFilesConfigError` for a line
 * that is not a pattern), so every tool call uses the same secret-file rules.
 */
export async function initializeAgent(input: InitializeAgentInput): Promise<InitializedAgent> {
  const { agent, messages, context, warnings, pin } = await initialize(input, false);
  return { agent, messages, context, warnings, ...(pin ? { pin } : {}) };
}

/**
 * Initialises an agent for `inspect`, which shows an agent whatever is wrong with it: like
 * `initializeAgent`, except that a critical action that fails (a refusal, a file too large, a
 * config that does not parse...) or write roots that cannot be trusted do not throw but become
 * lines of `warnings` (a session's write roots are then empty), and `wouldStop` says whether a
 * session would have stopped. Still throws when the bundle does not load or the agent is not found,
 * cannot be read or does not parse. Never use it to start a session.
 */
export async function initializeAgentForInspection(input: InitializeAgentInput): Promise<InspectedInitialization> {
  return initialize(input, true);
}

async function initialize(input: InitializeAgentInput, keepGoing: boolean): Promise<InspectedInitialization> {
  const loadOptions: LoadBundleOptions = {
    ...(input.projectRoot !== undefined ? { projectRoot: input.projectRoot } : {}),
    ...(input.allowBroadProjectRoot ? { allowBroadProjectRoot: true } : {}),
    ...(input.userSkills ? { userSkills: true } : {}),
    ...(input.skillFolders !== undefined ? { skillFolders: input.skillFolders } : {}),
  };
  const bundle = await (input.loaderCache ? input.loaderCache.bundle(input.bundlePath, loadOptions) : loadBundle(input.bundlePath, loadOptions));
  const found = await findAgent(bundle, input.agentId);
  // A source agent (`*.agent.yaml`) is compiled with the installer's templates of its tree, if
  // any; an agent skill from its SKILL.md and customization; a folder of skills runs our own agent.
  const { agent, files: agentFiles } = input.subagent
    ? { agent: subagentAgent(input.subagent, bundle.projectRoot), files: [] }
    : found.builtin
      ? { agent: builtinSkillsAgent(found.id, bundle.projectRoot), files: [] }
      : found.skill
        ? await readSkillAgent({ name: found.skill.name, dir: found.skill.dir, file: found.file, ...(found.description ? { description: found.description } : {}) }, bundle.projectRoot, found.module)
        : await readAgentFile(found.file, bundle.bundleRoot, { allowHardLinks: input.allowHardLinks === true });
  const warnings: string[] = [...(bundle.skillWarnings ?? [])];
  // An agent skill without a central config loads its module's config.yaml as the 6.0 agents did.
  const central = found.skill && found.module ? await readModuleVariables(bundle.projectRoot, found.module) : undefined;
  if (found.skill && found.configPath && central?.source !== 'central') {
    agent.criticalActions = [`Load and read {project-root}/${path.relative(bundle.projectRoot, found.configPath).split(path.sep).join('/')}`];
  }
  let wouldStop = false;

  let secretFiles: SecretFileRule[] = [];
  try {
    secretFiles = await loadSecretFileRules({ projectRoot: bundle.projectRoot, bundleRoot: bundle.bundleRoot, setting: input.secretFiles });
  } catch (error) {
    if (!keepGoing || !(error instanceof BundleError)) throw error;
    wouldStop = true;
    warnings.push(`Secret files: ${error.message.replace(/\s+/g, ' ')}; a session stops here`);
  }

  const paths = pathVariables({
    bundleRoot: bundle.bundleRoot,
    coreRoot: bundle.coreRoot,
    projectRoot: bundle.projectRoot,
    ...(found.configPath ? { configSource: found.configPath } : {}),
  });
  // A BMAD install of today: the installer's defaults under its config, then (6.4+) its central
  // config as resolved for the agent's module.
  const installDefaults = bundle.bmadRoot !== undefined && path.basename(bundle.bmadRoot) === '_bmad' ? { ...BMAD_INSTALL_DEFAULTS } : {};
  const centralVariables = central?.source === 'central' ? resolveConfigVariables(central.variables, { ...installDefaults, ...paths }) : {};
  const baseVariables = { ...installDefaults, ...centralVariables, ...paths };
  const maxReadBytes = input.maxReadBytes ?? DEFAULT_MAX_READ_BYTES;
  const critical = await processCriticalActions(agent, {
    bundle,
    agentFile: found.file,
    variables: baseVariables,
    maxReadBytes,
    ...(input.date !== undefined ? { date: input.date } : {}),
    ...(input.allowSecretFiles ? { allowSecretFiles: true } : {}),
    ...(secretFiles.length > 0 ? { secretFiles } : {}),
    ...(input.allowHardLinks ? { allowHardLinks: true } : {}),
    ...(input.strict ? { strict: true } : {}),
    ...(keepGoing ? { keepGoing: true } : {}),
  });
  warnings.push(...critical.warnings);
  wouldStop ||= critical.wouldStop;
  const readRoots = unique([bundle.bundleRoot, bundle.coreRoot, bundle.projectRoot]);
  const facts = agent.skill
    ? await loadPersistentFacts(agent.skill.persistentFacts, {
        projectRoot: bundle.projectRoot,
        readRoots,
        variables: critical.variables,
        maxReadBytes,
        ...(input.allowSecretFiles ? { allowSecretFiles: true } : {}),
        ...(secretFiles.length > 0 ? { secretFiles } : {}),
      })
    : { messages: [], files: [], warnings: [] };
  warnings.push(...facts.warnings);

  const configPath = critical.configPath ?? found.configPath;
  const protectedPaths = await protectedPathsFor({
    bundle,
    options: loadOptions,
    variables: critical.variables,
    read: [...agentFiles, ...(configPath ? [configPath] : []), ...critical.loadedFiles, ...(central?.files ?? [])],
    maxReadBytes,
    ...(input.allowHardLinks ? { allowHardLinks: true } : {}),
    ...(input.loaderCache ? { cache: input.loaderCache } : {}),
  });
  let writeRoots: string[];
  try {
    writeRoots = await chooseWriteRoots(input.outputRoots, critical, configPath, bundle.projectRoot, protectedPaths);
  } catch (error) {
    if (!keepGoing || !(error instanceof BundleError)) throw error;
    writeRoots = [];
    wouldStop = true;
    warnings.push(`Write roots: ${error.message.replace(/\s+/g, ' ')}; a session stops here`);
  }
  const context: RuntimeContext = {
    bundleRoot: bundle.bundleRoot,
    coreRoot: bundle.coreRoot,
    projectRoot: bundle.projectRoot,
    ...(configPath ? { configPath } : {}),
    variables: critical.variables,
    readRoots,
    writeRoots,
    ...(bundle.skillFolders !== undefined ? { skillFolders: bundle.skillFolders } : {}),
    ...(input.commands ? { commands: withBundleRules(input.commands, bundle, found) } : {}),
    protectedPaths,
    ...(input.allowSecretFiles ? { allowSecretFiles: true } : {}),
    ...(secretFiles.length > 0 ? { secretFiles } : {}),
    ...(input.allowHardLinks ? { allowHardLinks: true } : {}),
    maxReadBytes,
  };
  const skillCatalog = bundle.skills !== undefined ? projectCatalog(bundle.skills) : undefined;
  const subagent = input.subagent ? await subagentInstructions(input.subagent, context) : undefined;
  const promptOptions = { ...(skillCatalog !== undefined ? { skillCatalog } : {}), ...(input.commands ? { commands: true } : {}), ...(subagent !== undefined ? { subagent } : {}) };
  const messages: SystemMessage[] = [
    { role: 'system', content: buildSystemPrompt(agent, promptOptions) },
    ...(central?.source === 'central' && found.module ? [configMessage(found.module, centralVariables, central.files)] : []),
    ...critical.messages,
    ...facts.messages,
  ];
  // What the agent was made of: its files, and for an agent skill every layer of its customization
  // and of the central config, present or not (an override added later is a change too).
  const centralLayers = central?.source === 'central' ? CENTRAL_CONFIG_LAYERS.map((layer) => path.join(bundle.projectRoot, '_bmad', ...layer.split('/'))) : (central?.files ?? []);
  const pinned = unique([...(found.skill ? skillPinFiles(found.skill, bundle.projectRoot) : []), ...agentFiles, ...centralLayers]);
  const pin = pinned.length > 0 ? { id: input.agentId, files: pinned, hash: await filesHash(pinned) } : undefined;
  return { agent, messages, context, warnings, wouldStop, bundle, ...(pin ? { pin } : {}) };
}

/**
 * The session's write roots, as real paths (see `initializeAgent`). Only the user widens writes:
 * an absolute `outputRoots` entry is taken as it is; anything else must stay inside the project.
 */
async function chooseWriteRoots(
  outputRoots: string[] | undefined,
  critical: Pick<CriticalActionResult, 'variables'>,
  configPath: string | undefined,
  projectRoot: string,
  protectedPaths: string[],
): Promise<string[]> {
  if (outputRoots && outputRoots.length > 0) {
    const roots: string[] = [];
    for (const root of outputRoots) {
      const real = await resolveRealPath(path.resolve(projectRoot, root));
      if (!path.isAbsolute(root) && !isInside(real, projectRoot)) {
        throw new UnsafeRootError(
          `The output root "${root}" is taken from the project root ${projectRoot} but leads out of it (to ${real}) ` + `through a symlink; give an absolute path to write outside the project`,
          real,
          { field: 'outputRoots' },
        );
      }
      roots.push(real);
    }
    return unique(roots);
  }
  const outputFolder = critical.variables.output_folder;
  const fromConfig = outputFolder !== undefined && outputFolder.trim() !== '' && findUnresolved(outputFolder).length === 0;
  const target = fromConfig ? path.resolve(projectRoot, outputFolder) : path.join(projectRoot, DEFAULT_OUTPUT_FOLDER);
  const what = fromConfig ? `The output_folder ${outputFolder}${configPath ? ` (set in ${configPath})` : ''}` : `The default output folder ${target}`;
  const details = { field: 'output_folder', ...(fromConfig && configPath ? { file: configPath } : {}) };
  const widen = 'a bundle cannot send writes out of the project; to write there, the user passes the folder as an output root (outputRoots)';
  if (!isInside(target, projectRoot)) {
    throw new UnsafeRootError(`${what} resolves to ${target}, outside the project root ${projectRoot}: ${widen}`, target, details);
  }
  const real = await resolveRealPath(target);
  if (!isInside(real, projectRoot)) {
    throw new UnsafeRootError(`${what} is reached through a symlink that leads outside the project root ${projectRoot} (to ${real}): ${widen}`, target, details);
  }
  if (protectingEntry(real, protectedPaths) !== undefined) {
    throw new UnsafeRootError(
      `${what} lies inside the bundle's own files (${real}); save_output never writes there. ` + `Point it at a folder of its own, such as {project-root}/docs`,
      target,
      details,
    );
  }
  return [real];
}

/** The session's command settings with the rules the bundle adds after the session's own (bundle-command-rules.ts). */
function withBundleRules(commands: CommandSettings, bundle: BundleInfo, agent: BundleAgent): CommandSettings {
  const { rules: own, ...settings } = commands;
  const rules = mergeCommandRules(own, bundleCommandRules(bundle, agent));
  return { ...settings, ...(rules ? { rules } : {}) };
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
