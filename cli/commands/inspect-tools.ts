/**
 * `loopwright inspect --list-tools`: the tools a session of the agent would be offered, listed by
 * the same code as a session's `listTools` activity: the built-in tools, the custom tools of the
 * given modules (`--tool-module`) and the tools of the project's MCP servers, which this starts
 * and stops again, after the agent's allow-list, with what each call needs (approval or not).
 */
import type { ListToolsResult } from '../../common/offered-tools';
import type { BundleInspection } from '../../bundle/inspect';
import { toolSpec } from '../../common/tools';

/** The listing, as `listTools` gives it. */
export async function listAgentTools(data: BundleInspection, bundlePath: string, agentId: string, toolModules: readonly string[]): Promise<ListToolsResult> {
  const [{ createListTools }, { McpPool }, { loadToolModules }] = await Promise.all([
    import('../../activities/list-tools'),
    import('../../activities/mcp/mcp-pool'),
    import('../../worker/tool-modules'),
  ]);
  const custom = await loadToolModules(toolModules);
  const pool = new McpPool();
  try {
    return await createListTools({ custom, mcp: pool })({ projectRoot: data.context.projectRoot, bundlePath, agentId });
  } finally {
    await pool.closeAll();
  }
}

/** The listing as text: one line per tool with its kind, access and approval. */
export function listedToolLines(listed: ListToolsResult): string[] {
  const byName = new Map(listed.offered.map((tool) => [tool.name, tool]));
  const lines = [`Tools a session would be offered (${listed.tools.length}, listed as a worker lists them):`];
  const width = Math.max(0, ...listed.tools.map((t) => t.function.name.length));
  for (const definition of listed.tools) {
    const name = definition.function.name;
    const tool = byName.get(name);
    const kind = tool ? (tool.kind === 'mcp' ? `mcp ${tool.mcp?.server ?? ''}`.trim() : 'custom') : 'builtin';
    const access = tool?.access ?? toolSpec(name)?.access ?? 'read';
    lines.push(`  ${name.padEnd(width)}  ${kind.padEnd(16)} ${access}${tool?.approval === 'required' ? '  needs approval' : ''}`);
  }
  for (const warning of listed.warnings ?? []) lines.push(`  ! ${warning}`);
  return lines;
}
