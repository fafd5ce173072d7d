/**
 * Lists the agents of an `agents/` folder without parsing them (`bundle-loader.ts` and
 * `source-tree.ts` use it for every layout): every regular file that is an agent by its name
 * (`isAgentFileName`: a `.md` other than a README, or a BMAD v6 source `*.agent.yaml` /
 * `*.agent.yml`). A symlink is not listed, and an `agents/` folder that leads out of the bundle
 * root through a symlink is refused.
 *
 * Two files that give the same id (`pm.md` and `pm.agent.yaml`, say a source next to a compiled
 * copy someone made by hand) are one agent: the source wins (`.agent.yaml`, then `.agent.yml`,
 * then `.md`), since it is what the other is built from; the others are reported in `shadowed`,
 * which `validate` shows as warnings.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { agentIdOfFile, type AgentHead, isAgentFileName, readAgentHead } from './agent-file';
import type { BundleAgent } from './bundle-loader';
import { isDirectory } from './bundle-layout';
import { BundleLoadError } from './errors';
import { isInside } from './sandbox/path-inside';

/** How much of an agent file is read to find its name and title when listing a bundle. */
const AGENT_HEAD_BYTES = 64 * 1024;

/** An agent file left out because another file of its folder gives the same id. */
export interface ShadowedAgent {
  /** The file left out (absolute). */
  file: string;
  /** The file listed in its place. */
  by: string;
}

/** The agents of one `agents/` folder, and the files left out for them. */
export interface ScannedAgents {
  agents: BundleAgent[];
  shadowed: ShadowedAgent[];
}

/** Lists the agents of `dir` (see the module comment); none when it is not a folder. */
export async function scanAgents(dir: string, module: string | undefined, root: string): Promise<ScannedAgents> {
  if (!(await isDirectory(dir))) return { agents: [], shadowed: [] };
  const realDir = await fs.realpath(dir);
  if (!isInside(realDir, await fs.realpath(root), true)) {
    throw new BundleLoadError(`Agents folder ${dir} leaves the bundle folder ${root} (through a symlink)`, { file: dir });
  }
  const names = (await fs.readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isFile() && isAgentFileName(e.name))
    .map((e) => e.name)
    .sort();
  const chosen = new Map<string, string>();
  const shadowed: ShadowedAgent[] = [];
  for (const name of [...names].sort((a, b) => rank(a) - rank(b))) {
    const id = agentIdOfFile(name);
    const winner = chosen.get(id);
    if (winner === undefined) chosen.set(id, name);
    else shadowed.push({ file: path.join(dir, name), by: path.join(dir, winner) });
  }
  const agents: BundleAgent[] = [];
  for (const name of names) {
    const id = agentIdOfFile(name);
    if (chosen.get(id) !== name) continue;
    const file = path.join(dir, name);
    agents.push({ id, file, ...(module ? { module } : {}), ...(await agentHead(file)) });
  }
  return { agents, shadowed };
}

/** Which file of a same-id group wins: lower first. */
function rank(name: string): number {
  const lower = name.toLowerCase();
  if (lower.endsWith('.agent.yaml')) return 0;
  if (lower.endsWith('.agent.yml')) return 1;
  return 2;
}

/**
 * Name, title and id of an agent file, found by a cheap scan of its first `AGENT_HEAD_BYTES`
 * (see `readAgentHead`), opened as a regular file only (a FIFO is refused, not waited on).
 */
export async function agentHead(file: string): Promise<AgentHead> {
  return readAgentHead(file, AGENT_HEAD_BYTES);
}
