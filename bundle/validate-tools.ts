/**
 * The tool checks of `loopwright validate`: each agent's allow-list (`tools:` in bundle.yaml), whose
 * entries that can only be mistakes are warnings, and the project's `.mcp.json`, whose problems are
 * errors (a session would fail to read it). Also the built-in tools each agent is offered, for --json.
 */
import * as path from 'node:path';
import { LOOP_TOOL_NAMES } from '../common/tools';
import { offeredBuiltinTools, unmatchedAllowListEntries } from './agent-tools';
import { listedId, type BundleInfo } from './bundle-loader';
import { MANIFEST_FILE } from './bundle-layout';
import { readMcpServersFile } from './mcp-servers-file';

/** One finding, as validate reports it: the file, the field in it, what is wrong. */
export interface ToolFinding {
  file: string;
  field: string;
  message: string;
}

/** The tools an agent of the bundle is offered. */
export interface AgentTools {
  /** The id `validate` knows it by (`<module>/<id>` in an installed tree). */
  id: string;
  /** Its allow-list, when the manifest gives one. */
  allowList?: string[];
  /** The built-in tools it is offered, in the order the model sees them. */
  builtinTools: string[];
}

/** What the tool checks found. */
export interface ToolChecks {
  agents: AgentTools[];
  warnings: ToolFinding[];
  problems: ToolFinding[];
}

/** Checks the agents' allow-lists and the `.mcp.json` of `projectRoot` (default: the bundle's project root). */
export async function checkTools(bundle: BundleInfo, projectRoot: string = bundle.projectRoot): Promise<ToolChecks> {
  const checks: ToolChecks = { agents: [], warnings: [], problems: [] };
  const manifest = path.join(bundle.bundleRoot, MANIFEST_FILE);
  for (const [index, agent] of bundle.agents.entries()) {
    const id = listedId(bundle, agent);
    const builtinTools = offeredBuiltinTools(agent.tools).map((t) => t.name);
    checks.agents.push({ id, ...(agent.tools ? { allowList: [...agent.tools] } : {}), builtinTools });
    if (!agent.tools) continue;
    // Only a manifest gives agents an allow-list, in the same order as `bundle.agents`.
    for (const entry of unmatchedAllowListEntries(agent.tools)) {
      checks.warnings.push({
        file: manifest,
        field: `agents.${index}.tools.${agent.tools.indexOf(entry)}`,
        message: `"${entry}" matches no built-in tool and has no "__", so it names no MCP tool (<server>__<tool>); only a custom tool a worker registers could match it`,
      });
    }
    if (agent.tools.length === 0) {
      checks.warnings.push({
        file: manifest,
        field: `agents.${index}.tools`,
        message: `an empty list: the agent is offered no tool but the loop-breaking ones (${LOOP_TOOL_NAMES.join(', ')}), unless a session gives its own list`,
      });
    }
  }
  const mcp = await readMcpServersFile(projectRoot);
  for (const problem of mcp.problems) {
    checks.problems.push({ file: mcp.file, field: problem.field, message: `${problem.message} (a session started in ${projectRoot} reads this file)` });
  }
  return checks;
}
