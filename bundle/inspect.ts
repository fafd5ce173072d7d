/**
 * What `loopwright inspect` shows: an agent as a session would start it (parsed definition,
 * commands with their resolved targets, opening messages, system prompt, tool context), computed
 * by the same agent initialisation a session runs, without calling a model.
 *
 * Inspect never refuses an agent that parses: what would stop a session (a critical action refused
 * or failing, write roots that cannot be trusted) is listed in `warnings`, next to what a session
 * only warns about (a named file that does not exist) and what inspect finds on its own (variables
 * that do not resolve in the instructions the model gets or in command targets, command files that
 * do not exist or leave the roots, prompts a command names that the agent lacks).
 *
 * It also shows what the model would be offered: the built-in tools the agent's allow-list
 * (`tools:` in bundle.yaml) lets through, and the MCP servers of the project's `.mcp.json` (named,
 * never connected to: their tools are listed when a session starts, `loopwright tools <session>`).
 * A `.mcp.json` that cannot be read is a warning.
 */
import type { SystemMessage, ToolDefinition } from '../common/messages';
import type { RuntimeContext } from '../common/runtime-context';
import { LOOP_TOOL_DEFINITIONS, TOOL_DEFINITIONS } from '../common/tool-definitions';
import { didYouMean, projectCatalogTokens, skillSummary, type SkillSummary } from './skills/project-skills';
import { agentToolAllowList, type BuiltinToolOffer, offeredBuiltinTools } from './agent-tools';
import type { AgentDefinition, CommandTarget } from './agent-schema';
import { listedId, loadBundle, type LoadBundleOptions, matchAgent, type BundleInfo } from './bundle-loader';
import { delegatesOf } from './agent-delegates';
import type { DelegateAgent } from '../common/delegation-types';
import { SecurityViolationError } from './errors';
import { initializeAgentForInspection } from './initialize-agent';
import { type McpServerSummary, readMcpServersFile } from './mcp-servers-file';
import { guardRead, secretOptionsOf } from './sandbox/path-guard';
import { findUnresolved, resolveVariables } from './variables';
import { spellVariable } from './workflow-loader';

/** How the message of a critical instruction starts (see `processCriticalActions`). */
const INSTRUCTION = '[Critical Instruction] ';

/** A command target with its path resolved against the session's variables (not for `action`). */
export interface InspectedTarget extends CommandTarget {
  resolved?: string;
}

/** Everything `inspect` prints. Plain JSON. */
export interface BundleInspection {
  bundle: Pick<BundleInfo, 'kind' | 'bundleRoot' | 'coreRoot' | 'projectRoot' | 'configPath'> & {
    agents: { id: string; name?: string; title?: string; file: string; module?: string }[];
  };
  agent: AgentDefinition;
  /** `checklist` and `document`: what a validate-workflow item (or a workflow item) checks, as written. */
  commands: { cmd: string; description: string; targets: InspectedTarget[]; checklist?: string; document?: string }[];
  /** The project's Agent Skills, when it has any: where each was found, and whether the catalog hides it. */
  skills?: SkillSummary[];
  /** Estimated tokens the skill catalog adds to the system prompt. */
  catalogTokens?: number;
  /** The session's opening messages: the system prompt first, then one per critical action. */
  messages: SystemMessage[];
  systemPrompt: string;
  context: RuntimeContext;
  /** The built-in tools the model is offered (the agent's allow-list applied), in the order it sees them. */
  tools: BuiltinToolOffer[];
  /** The agent's own allow-list (`tools:` in bundle.yaml), when it has one. */
  toolAllowList?: string[];
  /** The agents it may hand tasks to with `delegate_task` (its `delegates:`, else every other agent), when there are any. */
  delegates?: DelegateAgent[];
  /** The definitions the model is sent for `tools`. */
  toolDefinitions: ToolDefinition[];
  /** The MCP servers of the project's `.mcp.json` (its file in `mcpServersFile`); their tools are known only once a session starts. */
  mcpServers: McpServerSummary[];
  /** The `.mcp.json` looked at, when it exists. */
  mcpServersFile?: string;
  /**
   * Every problem met, one human-readable line each (empty when none): the session's own warnings
   * (`Critical action: could not load <path> (not found)`), what would stop a session (the line
   * ends with `a session stops here`), and what inspect found in instructions and commands.
   */
  warnings: string[];
  /** Whether a session with this agent would start (false when a warning says it stops there). */
  sessionWouldStart: boolean;
}

/**
 * Initialises `agentId` (default: the bundle's entry point or only agent) of the bundle at
 * `bundlePath` and describes it. Throws the typed errors of `initializeAgent` only when the bundle
 * does not load or the agent is not found, cannot be read or does not parse; every other problem
 * is listed in `warnings`.
 */
export async function inspectBundle(bundlePath: string, agentId = '', skills: SkillOptions = {}): Promise<BundleInspection> {
  // The bundle as the initialisation loaded it (the same options): loading it again would scan every agent twice.
  const { agent, messages, context, warnings: initWarnings, wouldStop, bundle } = await initializeAgentForInspection({ bundlePath, agentId, ...skills });
  const warnings = [...initWarnings];
  const add = (line: string) => {
    if (!warnings.includes(line)) warnings.push(line);
  };

  for (const message of messages.slice(1)) {
    if (!message.content.startsWith(INSTRUCTION)) continue;
    const text = message.content.slice(INSTRUCTION.length);
    const unresolved = findUnresolved(text);
    if (unresolved.length > 0) {
      add(`Critical instruction: ${variablesText(unresolved)} ${unresolved.length === 1 ? 'does' : 'do'} not resolve in "${shorten(text)}"`);
    }
  }

  const commands: BundleInspection['commands'] = [];
  for (const command of agent.commands) {
    const targets: InspectedTarget[] = [];
    for (const target of command.targets) {
      if (target.kind === 'action') {
        const id = target.value.startsWith('#') ? target.value.slice(1) : undefined;
        if (id !== undefined && !agent.prompts.some((p) => p.id === id)) add(`Command ${command.cmd}: no prompt with id "${id}" in the agent`);
        targets.push({ ...target });
        continue;
      }
      if (target.kind === 'skill') {
        const skill = bundle.skills?.find((k) => k.name === target.value);
        if (skill === undefined) {
          add(
            `Command ${command.cmd}: no skill named ${target.value} in the project's skills folders${didYouMean(
              target.value,
              (bundle.skills ?? []).map((k) => k.name),
            )}`,
          );
        }
        targets.push(skill === undefined ? { ...target } : { ...target, resolved: skill.dir });
        continue;
      }
      const checked = await checkTarget(target, context);
      if (checked.problem !== undefined) add(`Command ${command.cmd}: ${checked.problem}`);
      targets.push(checked.resolved === undefined ? { ...target } : { ...target, resolved: checked.resolved });
    }
    commands.push({
      cmd: command.cmd,
      description: command.description,
      targets,
      ...(command.checklist !== undefined ? { checklist: command.checklist } : {}),
      ...(command.document !== undefined ? { document: command.document } : {}),
    });
  }

  // Asked as the worker asks it when a session starts, so what is shown is what will be offered.
  const allowList = await agentToolAllowList(bundlePath, agentId);
  const tools = offeredBuiltinTools(allowList, { skills: bundle.skills !== undefined });
  for (const line of bundle.skillWarnings ?? []) add(line);
  const delegates = await delegatesOf(bundle, matchAgent(bundle, agentId), undefined);
  const mcp = await readMcpServersFile(context.projectRoot);
  for (const problem of mcp.problems) add(`MCP servers: ${mcp.file}${problem.field ? ` ${problem.field}` : ''}: ${problem.message}`);

  return {
    bundle: {
      kind: bundle.kind,
      bundleRoot: bundle.bundleRoot,
      coreRoot: bundle.coreRoot,
      projectRoot: bundle.projectRoot,
      ...(bundle.configPath ? { configPath: bundle.configPath } : {}),
      agents: bundle.agents.map((a) => ({
        id: a.id,
        file: a.file,
        ...(a.name ? { name: a.name } : {}),
        ...(a.title ? { title: a.title } : {}),
        ...(a.module ? { module: a.module } : {}),
      })),
    },
    agent,
    commands,
    ...(bundle.skills !== undefined
      ? {
          skills: bundle.skills.map(skillSummary),
          catalogTokens: projectCatalogTokens(bundle.skills),
        }
      : {}),
    messages,
    systemPrompt: messages[0]?.content ?? '',
    context,
    tools,
    ...(allowList ? { toolAllowList: allowList } : {}),
    ...(delegates.length > 0 ? { delegates } : {}),
    toolDefinitions: [...TOOL_DEFINITIONS, ...LOOP_TOOL_DEFINITIONS].filter((d) => tools.some((t) => t.name === d.function.name)),
    mcpServers: mcp.servers,
    ...(mcp.found ? { mcpServersFile: mcp.file } : {}),
    warnings,
    sessionWouldStart: !wouldStop,
  };
}

/** A command's path resolved with the session's variables, and what is wrong with it, if anything. */
async function checkTarget(target: CommandTarget, context: RuntimeContext): Promise<{ resolved?: string; problem?: string }> {
  let resolved: string;
  try {
    resolved = resolveVariables(target.value, context.variables);
  } catch (error) {
    // A variable cycle or an expansion over its limit.
    return { problem: `${target.kind} ${target.value}: ${firstLine(error)}` };
  }
  const unresolved = findUnresolved(resolved);
  if (unresolved.length > 0) {
    return { resolved, problem: `${variablesText(unresolved)} ${unresolved.length === 1 ? 'does' : 'do'} not resolve in ${target.value}` };
  }
  try {
    await guardRead(resolved, context.readRoots, secretOptionsOf(context));
    return { resolved };
  } catch (error) {
    if (error instanceof SecurityViolationError) return { resolved, problem: `${target.kind} path leaves the allowed roots: ${target.value}` };
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      // The guard names the real path it looked for (a relative target is taken from the bundle root).
      const guarded = (error as { path?: unknown }).path;
      const where = typeof guarded === 'string' && guarded !== '' ? guarded : resolved;
      return { resolved, problem: `${target.kind} file not found: ${where === target.value ? where : `${target.value} (${where})`}` };
    }
    return { resolved, problem: `${target.kind} ${target.value}: ${firstLine(error)}` };
  }
}

function variablesText(variables: string[]): string {
  return `${variables.length === 1 ? 'variable' : 'variables'} ${variables.map(spellVariable).join(', ')}`;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0];
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
}

/** The skill settings a session would run with (`--user-skills`, `--skills-folder`). */
export type SkillOptions = Pick<LoadBundleOptions, 'userSkills' | 'skillFolders'>;

/** What `listProject` shows: the agents and skills a project offers, with where each was found. */
export interface ProjectListing {
  kind: BundleInfo['kind'];
  projectRoot: string;
  bundleRoot: string;
  agents: { id: string; name?: string; title?: string; file: string; module?: string; skill?: boolean }[];
  skills: NonNullable<BundleInspection['skills']>;
  /** Estimated tokens the skill catalog adds to every system prompt. */
  catalogTokens: number;
  warnings: string[];
}

/** The agents and skills of the project at `bundlePath`, without choosing an agent (`inspect <project>`). */
export async function listProject(bundlePath: string, settings: SkillOptions = {}): Promise<ProjectListing> {
  const bundle = await loadBundle(bundlePath, settings);
  const skills = bundle.skills ?? [];
  return {
    kind: bundle.kind,
    projectRoot: bundle.projectRoot,
    bundleRoot: bundle.bundleRoot,
    agents: bundle.agents.map((a) => ({
      id: listedId(bundle, a),
      file: a.file,
      ...(a.name ? { name: a.name } : {}),
      ...(a.title ? { title: a.title } : {}),
      ...(a.module ? { module: a.module } : {}),
      ...(a.skill ? { skill: true } : {}),
    })),
    skills: skills.map(skillSummary),
    catalogTokens: projectCatalogTokens(skills),
    warnings: bundle.skillWarnings ?? [],
  };
}
