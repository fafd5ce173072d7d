/**
 * What `loopwright inspect` shows: an agent as a session would start it (parsed definition,
 * commands with their resolved targets, opening messages, system prompt, tool context), computed
 * by the same agent initialisation a session runs, without calling a model.
 */
import type { SystemMessage, ToolDefinition } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { TOOL_DEFINITIONS } from '../tools/definitions';
import type { AgentDefinition, CommandTarget } from './agent-schema';
import { loadBundle, type BundleInfo } from './bundle-loader';
import { initializeAgent } from './initialize-agent';
import { resolveVariables } from './variables';

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
  commands: { cmd: string; description: string; targets: InspectedTarget[] }[];
  /** The session's opening messages: the system prompt first, then one per critical action. */
  messages: SystemMessage[];
  systemPrompt: string;
  context: RuntimeContext;
  tools: ToolDefinition[];
}

/**
 * Initialises `agentId` (default: the bundle's entry point or only agent) of the bundle at
 * `bundlePath` and describes it. Throws the typed errors of `initializeAgent`.
 */
export async function inspectBundle(bundlePath: string, agentId = ''): Promise<BundleInspection> {
  const bundle = await loadBundle(bundlePath);
  const { agent, messages, context } = await initializeAgent({ bundlePath, agentId });
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
    commands: agent.commands.map((c) => ({
      cmd: c.cmd,
      description: c.description,
      targets: c.targets.map((t) =>
        t.kind === 'action' ? { ...t } : { ...t, resolved: resolveVariables(t.value, context.variables) },
      ),
    })),
    messages,
    systemPrompt: messages[0]?.content ?? '',
    context,
    tools: TOOL_DEFINITIONS,
  };
}
