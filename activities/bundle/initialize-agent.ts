/**
 * Agent initialisation, the first activity of a session: load the bundle, parse the agent, run its
 * critical actions, build the system prompt, and hand back everything the tools will need as a
 * `RuntimeContext` (plain data, recorded in the workflow history).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { SystemMessage } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { parseAgent } from './agent-parser';
import type { AgentDefinition } from './agent-schema';
import { findAgent, loadBundle } from './bundle-loader';
import { processCriticalActions } from './critical-actions';
import { buildSystemPrompt } from './system-prompt';
import { findUnresolved, pathVariables } from './variables';

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
  /** Folders `save_output` may write to; relative ones are taken from the project root. */
  outputRoots?: string[];
  /**
   * `{project-root}` of a stand-alone bundle (absolute; the user's working folder). Not yet used by
   * the loader: see issue "Hardening" / "BMAD fidelity".
   */
  projectRoot?: string;
  /** Value of `{date}` during initialisation (default today). */
  date?: string;
}

/** The parsed agent, its opening messages (system prompt first) and the tools' context. */
export interface InitializedAgent {
  agent: AgentDefinition;
  messages: SystemMessage[];
  context: RuntimeContext;
}

/**
 * Initialises an agent. Throws a `BundleError` subclass when the bundle, the agent file or a
 * critical action is at fault (`BundleLoadError`, `AgentNotFoundError`, `AgentParseError`,
 * `CriticalActionError`).
 *
 * Write roots, in order of preference: `outputRoots` when given; else the `output_folder` config
 * variable when it resolved fully (real BMAD configs set it to `{project-root}/docs`, where the
 * agents' workflows write); else `<projectRoot>/output`. Read roots are the bundle, core and
 * project roots. `variables` holds the path variables plus every config key loaded.
 */
export async function initializeAgent(input: InitializeAgentInput): Promise<InitializedAgent> {
  const bundle = await loadBundle(input.bundlePath);
  const found = await findAgent(bundle, input.agentId);
  const agent = parseAgent(await fs.readFile(found.file, 'utf8'), found.file);

  const baseVariables = pathVariables({
    bundleRoot: bundle.bundleRoot,
    coreRoot: bundle.coreRoot,
    projectRoot: bundle.projectRoot,
    ...(found.configPath ? { configSource: found.configPath } : {}),
  });
  const maxReadBytes = input.maxReadBytes ?? DEFAULT_MAX_READ_BYTES;
  const critical = await processCriticalActions(agent, {
    bundle,
    agentFile: found.file,
    variables: baseVariables,
    maxReadBytes,
    ...(input.date !== undefined ? { date: input.date } : {}),
  });

  const configPath = critical.configPath ?? found.configPath;
  const context: RuntimeContext = {
    bundleRoot: bundle.bundleRoot,
    coreRoot: bundle.coreRoot,
    projectRoot: bundle.projectRoot,
    ...(configPath ? { configPath } : {}),
    variables: critical.variables,
    readRoots: unique([bundle.bundleRoot, bundle.coreRoot, bundle.projectRoot]),
    writeRoots: writeRoots(input.outputRoots, critical.variables.output_folder, bundle.projectRoot),
    maxReadBytes,
  };
  const messages: SystemMessage[] = [{ role: 'system', content: buildSystemPrompt(agent) }, ...critical.messages];
  return { agent, messages, context };
}

function writeRoots(outputRoots: string[] | undefined, outputFolder: string | undefined, projectRoot: string): string[] {
  if (outputRoots && outputRoots.length > 0) return unique(outputRoots.map((root) => path.resolve(projectRoot, root)));
  if (outputFolder && outputFolder.trim() !== '' && findUnresolved(outputFolder).length === 0) {
    return [path.resolve(projectRoot, outputFolder)];
  }
  return [path.join(projectRoot, DEFAULT_OUTPUT_FOLDER)];
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
