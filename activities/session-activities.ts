/**
 * The worker-side implementation of `SessionActivities`: agent initialisation, the model calls
 * (the turn's call, the compaction summary, the verify phase's check, the context-window lookup)
 * and one activity per tool.
 * Built by a factory so the worker (and tests) choose the model settings.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { InitializeAgentActivityInput, SessionActivities } from '../common/activity-types';
import { AGENT_INIT_FAILED } from '../common/failure-types';
import type { AgentSummary, InitializeResult } from '../common/session-types';
import { builtInToolDefinitions, LOOP_TOOL_DEFINITIONS, toolDefinition } from '../common/tool-definitions';
import { DELEGATE_TASK, delegateDescription, RUN_SUBAGENT } from '../common/tools';
import type { DelegateAgent } from '../common/delegation-types';
import { agentDelegates } from '../bundle/agent-delegates';
import type { AgentDefinition } from '../bundle/agent-schema';
import { initializeAgent } from '../bundle/initialize-agent';
import type { LoadBundleOptions } from '../bundle/bundle-loader';
import { checkPins } from '../bundle/skills/pins';
import { createModelActivities, type ModelActivityOptions } from './model/call-model';
import { heartbeatEverySecond } from './model/heartbeat';
import { INLINE_TOOL_ACTIVITIES, TOOL_ACTIVITIES } from './tools/dispatch';
import { checkCustomTools, type CustomTool } from './tools/custom-tool';
import { createListTools, type McpToolLister } from './list-tools';
import { createCallMcpTool, type McpToolCaller } from './call-mcp-tool';
import { defaultMcpPool } from './mcp/default-pool';
import { createLoadTranscriptPage, queryTranscriptSource } from './transcript/transcript-source';
import type { CommandCheck } from '../common/verify-types';
import { NOT_FILES_HOST, onFilesHost } from '../common/files-host';
import type { ToolResult } from '../common/messages';
import type { RuntimeContext } from '../common/runtime-context';
import { commandChecks } from './command-checks';
import { type CommandRules, mergeCommandRules, rulesFrom } from '../common/commands/command-rules';
import { RUN_COMMAND } from '../common/tools/run-command';
import { refusingDenied } from './tools/run-command';

/** Settings of the activities a worker registers. */
export interface ActivitiesOptions {
  /** Model client settings; by default from OPENAI_API_KEY, OPENAI_BASE_URL and LOOPWRIGHT_MODEL. */
  model?: ModelActivityOptions;
  /** Largest file `read_file` returns, in bytes (default 1 MiB; LOOPWRIGHT_MAX_READ_BYTES). */
  maxReadBytes?: number;
  /**
   * A client of the worker's namespace: model calls and continued runs read session transcripts
   * through it (createWorker supplies one). Without it only the first-version `callModel` works.
   */
  client?: Client;
  /** Custom tools (`defineTool`), each registered as an activity under its name and offered to every session. */
  tools?: readonly CustomTool[];
  /**
   * Where MCP tools are listed and called: by default a pool of connections of this worker
   * (`McpPool`), opened when a session first needs a server and closed when idle; false for none.
   */
  mcp?: McpConnections | false;
  /**
   * This worker's host id (createWorker gives it): a tool call of a session whose files live on
   * another host is refused before it touches anything (`LoopwrightNotFilesHost`), so the session
   * sends it to that host. Unset: no check.
   */
  hostId?: string;
  /**
   * The operator's command rules (`loopwright worker --allow-command/--deny-command`), for every
   * session with commands on: added to its rules when this worker initialises it (recorded with the
   * session, so its approvals follow them), and the deny rules checked again by this worker before
   * it runs any command, whoever initialised the session.
   */
  commandRules?: { allow?: string[]; deny?: string[] };
}

/** What the MCP activities need of a connection pool. */
export type McpConnections = McpToolLister & McpToolCaller;

/** Create the activities of a session, keyed by the names the workflow schedules (and the Web UI shows). */
export function createActivities(options: ActivitiesOptions = {}): SessionActivities {
  const source = options.client ? queryTranscriptSource(options.client) : undefined;
  const { callModel, callModelV2, summarizeContext, verifyDocument, describeModel } = createModelActivities({
    ...options.model,
    transcriptSource: source,
    inlineReads: { run: runBuiltInTool, ...(options.hostId !== undefined ? { hostId: options.hostId } : {}) },
  });
  const maxReadBytes = options.maxReadBytes ?? readMaxBytesFromEnv();
  const custom = options.tools ?? [];
  checkCustomTools(custom);
  const mcp = options.mcp === false ? undefined : (options.mcp ?? defaultMcpPool());
  const workerRules = workerCommandRules(options.commandRules);
  return {
    async initializeAgent(input: InitializeAgentActivityInput): Promise<InitializeResult> {
      // Heartbeats while it reads the project, so a worker lost meanwhile is noticed within the
      // heartbeat timeout instead of the start-to-close bound.
      const stopBeating = heartbeatEverySecond();
      try {
        const { delegation, ...rest } = input;
        const result = withWorkerRules(await initializeAgent({ ...rest, maxReadBytes }), workerRules);
        const delegates = delegation && !input.subagent ? await agentDelegates(input.bundlePath, input.agentId, delegation.agents, loadOptionsOf(input)) : [];
        // Subagents from instructions: where skills ask for them (Agent Skills projects), when delegation is on.
        const subagents = delegation !== undefined && result.context.skillFolders !== undefined;
        return {
          agent: summarizeAgent(result.agent),
          messages: result.messages,
          context: result.context,
          tools: [
            ...builtInToolDefinitions({ skills: result.context.skillFolders !== undefined, commands: result.context.commands !== undefined }),
            ...LOOP_TOOL_DEFINITIONS,
            ...(delegates.length > 0 ? [delegateDefinition(delegates)] : []),
            ...(subagents ? [toolDefinition(RUN_SUBAGENT)] : []),
          ],
          ...warningsOf(result),
          ...checksOf(result.agent),
          ...(delegates.length > 0 ? { delegates } : {}),
          ...(result.pin ? { agentPin: result.pin } : {}),
        };
      } catch (err) {
        // Reading a bundle is local and deterministic: a missing file or a malformed agent will
        // not fix itself on retry, so the operator hears about it at once.
        const error = err as Error;
        throw ApplicationFailure.create({
          type: AGENT_INIT_FAILED,
          message: error.message,
          nonRetryable: true,
          details: [{ name: error.name }],
        });
      } finally {
        stopBeating();
      }
    },
    callModel,
    callModelV2,
    summarizeContext,
    verifyDocument,
    describeModel,
    loadTranscriptPage: source
      ? createLoadTranscriptPage(source)
      : async () => {
          throw ApplicationFailure.nonRetryable('This worker cannot read session transcripts: create its activities with a client', 'LoopwrightWorkerMisconfigured');
        },
    listTools: createListTools({ custom, ...(mcp ? { mcp } : {}) }),
    checkPins,
    callMcpTool: mcp
      ? createCallMcpTool(mcp, { secrets: modelSecrets(options.model) })
      : async () => {
          throw ApplicationFailure.nonRetryable('This worker has no MCP support (created with mcp: false)', 'LoopwrightWorkerMisconfigured');
        },
    // One activity type per tool, registered under the tool's name; custom tools likewise.
    ...(Object.fromEntries(Object.entries(TOOL_ACTIVITIES).map(([name, activity]) => [name, onHost(options.hostId, activity)])) as typeof TOOL_ACTIVITIES),
    ...(workerRules?.deny ? { [RUN_COMMAND.name]: onHost(options.hostId, refusingDenied(workerRules, TOOL_ACTIVITIES.run_command)) } : {}),
    ...Object.fromEntries(custom.map((tool) => [tool.name, onHost(options.hostId, tool.activity)])),
  };
}

/** The `delegate_task` definition the model is sent: its description lists the agents it may call. */
/** A built-in tool run by its activity wrapper, inside whatever activity calls it (inline reads). */
function runBuiltInTool(name: string, context: RuntimeContext, args: unknown): Promise<ToolResult> {
  const activity = Object.prototype.hasOwnProperty.call(INLINE_TOOL_ACTIVITIES, name) ? INLINE_TOOL_ACTIVITIES[name as keyof typeof INLINE_TOOL_ACTIVITIES] : undefined;
  return activity ? activity(context, args) : Promise.reject(new Error(`No built-in tool ${name}`));
}

function delegateDefinition(agents: readonly DelegateAgent[]) {
  return toolDefinition({ ...DELEGATE_TASK, description: delegateDescription(agents) });
}

/** How the bundle is loaded for a session (its project root, as initialisation loads it). */
function loadOptionsOf(input: InitializeAgentActivityInput): LoadBundleOptions {
  return {
    ...(input.projectRoot !== undefined ? { projectRoot: input.projectRoot } : {}),
    ...(input.allowBroadProjectRoot ? { allowBroadProjectRoot: true } : {}),
    ...(input.userSkills ? { userSkills: true } : {}),
    ...(input.skillFolders !== undefined ? { skillFolders: input.skillFolders } : {}),
  };
}

/** `activity`, refusing a session whose files are on another host than `hostId` (see common/files-host.ts). */
function onHost<A extends (context: RuntimeContext, args: unknown) => Promise<ToolResult>>(hostId: string | undefined, activity: A): A {
  if (hostId === undefined) return activity;
  return (async (context: RuntimeContext, args: unknown) => {
    const wanted = context?.filesHost;
    if (!onFilesHost(hostId, wanted)) {
      throw ApplicationFailure.create({
        type: NOT_FILES_HOST,
        message: `This worker runs on host ${hostId}; the session's files are on host ${wanted}`,
        nonRetryable: true,
      });
    }
    return activity(context, args);
  }) as A;
}

/** The worker's command rules, each naming the worker as its source. */
function workerCommandRules(given: ActivitiesOptions['commandRules']): CommandRules | undefined {
  return mergeCommandRules({ allow: rulesFrom(given?.allow, "this worker's --allow-command"), deny: rulesFrom(given?.deny, "this worker's --deny-command") });
}

/** An initialised session with commands on gets the worker's rules after its own and its bundle's. */
function withWorkerRules<R extends { context: RuntimeContext }>(result: R, rules: CommandRules | undefined): R {
  const commands = result.context.commands;
  if (!rules || !commands) return result;
  return { ...result, context: { ...result.context, commands: { ...commands, rules: mergeCommandRules(commands.rules, rules) } } };
}

/** The agent's menu items that name a checklist, when there are any. */
function checksOf(agent: AgentDefinition): { checks?: CommandCheck[] } {
  const checks = commandChecks(agent);
  return checks.length > 0 ? { checks } : {};
}

/** Problems initialisation met without stopping, when there are any. */
function warningsOf(result: object): { warnings?: string[] } {
  const { warnings } = result as { warnings?: string[] };
  return warnings && warnings.length > 0 ? { warnings } : {};
}

/** The parts of a parsed agent that clients show. */
export function summarizeAgent(agent: AgentDefinition): AgentSummary {
  return {
    id: agent.id,
    name: agent.name,
    title: agent.title,
    ...(agent.icon ? { icon: agent.icon } : {}),
    commands: agent.commands.map((c) => ({ cmd: c.cmd, description: c.description })),
  };
}

function readMaxBytesFromEnv(): number | undefined {
  const raw = process.env.LOOPWRIGHT_MAX_READ_BYTES;
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new Error(`LOOPWRIGHT_MAX_READ_BYTES must be a positive whole number of bytes, got "${raw}"`);
  }
  return value;
}

/** The model API key, which no tool result may show. */
function modelSecrets(model: ModelActivityOptions | undefined): string[] {
  const key = model?.apiKey ?? process.env.OPENAI_API_KEY;
  return typeof key === 'string' && key.length >= 8 ? [key] : [];
}
