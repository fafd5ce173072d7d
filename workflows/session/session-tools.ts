/**
 * The tools a session offers, decided by the `listTools` activity and recorded in history: at the
 * start of every run (so a continued session sees the worker's tools of now), and on demand (the
 * `refreshTools` update). Sessions recorded before tools were listed offer the built-in tools and
 * never schedule the activity (`OFFERED_TOOLS_PATCH`).
 */
import { ApplicationFailure, condition, isCancellation, log, patched, setHandler } from '@temporalio/workflow';
import { BAD_INPUT, BUSY } from '../../common/failure-types';
import { refreshToolsUpdate } from '../../common/contract/session-definitions';
import type { ListToolsResult, SessionTool } from '../../common/offered-tools';
import type { InitializeResult, OfferedToolSummary, SessionInput } from '../../common/session-types';
import { DELEGATE_TASK, isLoopToolName, RUN_SUBAGENT, TOOL_SPECS } from '../../common/tools';
import type { SessionActivityStubs } from '../stubs/activity-proxies';
import type { SessionRuntime } from './session-runtime';
import { rootMessage, type SessionToolSet } from '../turn/tool-calls';

/** Sessions that list their tools (custom and MCP tools, allow-lists) at the start of each run. */
export const OFFERED_TOOLS_PATCH = 'loopwright-offered-tools';

/** The built-in tools only: what sessions recorded before tools were listed offer. */
export const BUILT_IN_TOOL_SET: SessionToolSet = { tools: TOOL_SPECS, mcpServers: {} };

/** What listing gave a run: the tools to offer the model and how to run them. */
export interface ListedTools {
  /** `init` with the model's tool definitions replaced (loop-breaking tools kept). */
  init: Omit<InitializeResult, 'messages'>;
  toolSet: SessionToolSet;
  summaries: OfferedToolSummary[];
  warnings: string[];
}

/**
 * Lists the session's tools when the session is of the version that does (`patched`), else keeps
 * the built-in ones. A listing that fails (a worker from before `listTools`, or one whose every
 * attempt failed) keeps the built-in tools and says why in the warnings: a session is never
 * stopped by a tool source it could do without.
 */
export async function listSessionTools(input: SessionInput, activities: SessionActivityStubs, init: Omit<InitializeResult, 'messages'>): Promise<ListedTools | undefined> {
  if (!patched(OFFERED_TOOLS_PATCH)) return undefined;
  let listed: ListToolsResult;
  try {
    listed = await activities.listTools.executeWithOptions({ summary: `listTools ${input.agentId}` }, [
      {
        projectRoot: init.context.projectRoot,
        bundlePath: input.bundlePath,
        agentId: input.agentId,
        ...(input.tools !== undefined ? { tools: input.tools } : {}),
        ...(input.mcpServers !== undefined ? { mcpServers: input.mcpServers } : {}),
        ...(input.projectMcpConfig === false ? { projectMcpConfig: false } : {}),
        ...(input.allowTools !== undefined ? { allowTools: input.allowTools } : {}),
        ...(init.context.skillFolders !== undefined ? { skills: true } : {}),
        ...(init.context.commands !== undefined ? { commands: true } : {}),
      },
    ]);
  } catch (err) {
    if (isCancellation(err)) throw err;
    const message = rootMessage(err);
    log.warn('Listing the session tools failed; offering the built-in tools', { error: message });
    return { init, toolSet: BUILT_IN_TOOL_SET, summaries: builtInSummaries(), warnings: [`Tools could not be listed (${message}); the built-in tools are offered`] };
  }
  const listedNames = new Set(listed.tools.map((t) => t.function.name));
  // Loop-breaking tools, delegate_task and run_subagent are the workflow's own: no allow-list narrows them.
  const workflowTools = [DELEGATE_TASK, RUN_SUBAGENT];
  const loopTools = init.tools.filter((t) => isLoopToolName(t.function.name) || workflowTools.some((spec) => spec.name === t.function.name));
  const delegates = workflowTools.filter((spec) => init.tools.some((t) => t.function.name === spec.name));
  const tools: SessionTool[] = [...TOOL_SPECS.filter((spec) => listedNames.has(spec.name)), ...listed.offered, ...delegates];
  return {
    init: { ...init, tools: [...listed.tools, ...loopTools] },
    toolSet: { tools, mcpServers: listed.mcpServers },
    summaries: summariesOf(tools),
    warnings: listed.warnings ?? [],
  };
}

/** What `state.tools` shows of each tool. */
export function summariesOf(tools: readonly SessionTool[]): OfferedToolSummary[] {
  return tools.map((tool) => {
    const offered = 'kind' in tool ? tool : undefined;
    return {
      name: tool.name,
      kind: offered?.kind ?? 'builtin',
      access: tool.access,
      ...(offered?.approval ? { approval: offered.approval } : {}),
      ...(offered?.mcp ? { server: offered.mcp.server } : {}),
    };
  });
}

function builtInSummaries(): OfferedToolSummary[] {
  return summariesOf(TOOL_SPECS);
}

/** Lists the run's tools and puts them in place: the model's definitions, the tool set, `state.tools` and warnings. */
export async function refreshSessionTools(rt: SessionRuntime): Promise<void> {
  if (!rt.init) return;
  const listed = await listSessionTools(rt.input, rt.activities, rt.init);
  if (!listed) return;
  rt.init = listed.init;
  rt.toolSet = listed.toolSet;
  rt.state.tools = listed.summaries;
  if (listed.warnings.length > 0) rt.state.warnings = [...(rt.state.warnings ?? []).filter((w) => !isToolWarning(w)), ...listed.warnings.map(toolWarning)];
}

const TOOL_WARNING_PREFIX = 'Tools: ';
const toolWarning = (w: string): string => `${TOOL_WARNING_PREFIX}${w}`;
const isToolWarning = (w: string): boolean => w.startsWith(TOOL_WARNING_PREFIX);

/** The `refreshTools` update: list the tools again once the session is ready; refused while a turn runs. */
export function installToolHandlers(rt: SessionRuntime): void {
  setHandler(
    refreshToolsUpdate,
    async () => {
      await condition(() => rt.ready || rt.state.status === 'failed');
      if (rt.state.tools === undefined) throw ApplicationFailure.nonRetryable('This session does not list its tools (it started before tools were listed)', BAD_INPUT);
      await refreshSessionTools(rt);
      return rt.state.tools;
    },
    {
      description: "List the session's tools again (custom, MCP) and return them",
      validator: () => {
        if (rt.continuing) throw rt.continuedFailure();
        if (rt.busy || rt.resumingTurn !== undefined) throw ApplicationFailure.nonRetryable('busy: a turn is running; refresh the tools once it has finished', BUSY);
      },
    },
  );
}
