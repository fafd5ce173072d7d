/**
 * An agent's own tool allow-list: `tools:` of its entry in the bundle's `bundle.yaml` (names or `*`
 * patterns, see common/tool-patterns.ts). The worker's `listTools` activity asks for it once per
 * session, after the agent initialised; `loopwright inspect` shows what it lets through.
 *
 * Cheap on purpose: it finds the manifest as the loader does (an installed BMAD tree, and a bundle
 * folder without `bundle.yaml`, have no allow-list), reads that one file, and picks the agent by the
 * loader's rule from the manifest's entries. The agent files are read (their first bytes) only
 * when the id is none of an entry's id, file name or path, e.g. the `<agent id>` attribute.
 */
import * as path from 'node:path';
import { MCP_NAME_SEPARATOR } from '../common/offered-tools';
import { allowedByPatterns } from '../common/tool-patterns';
import { LOOP_TOOL_NAMES, LOOP_TOOL_SPECS, offeredBuiltIns, TOOL_SPECS } from '../common/tools';
import { agentHead, installedProjectAt, matchAgent, type BundleAgent } from './bundle-loader';
import { MANIFEST_FILE, exists } from './bundle-layout';
import { parseManifest, readManifestFile } from './bundle-manifest';
import { realDirectory } from './sandbox/bundle-roots';
import { AgentNotFoundError } from './errors';

/**
 * The allow-list of the agent `agentId` of the bundle at `bundlePath`: a copy of its `tools:` in
 * `bundle.yaml`, or `undefined` when the entry has none, the bundle has no manifest or is an
 * installed BMAD tree. `agentId` is matched as a session matches it (`findAgent`): manifest id, file
 * name, path in the bundle or `<agent id>`; empty for the entry point or only agent. Throws the
 * loader's errors: `BundleLoadError` (no such folder, a bad manifest, an ambiguous id) and
 * `AgentNotFoundError`.
 */
export async function agentToolAllowList(bundlePath: string, agentId: string): Promise<string[] | undefined> {
  const root = await realDirectory(bundlePath);
  if ((await installedProjectAt(root)) !== undefined) return undefined;
  const file = path.join(root, MANIFEST_FILE);
  if (!(await exists(file))) return undefined;
  const manifest = parseManifest(await readManifestFile(file, root), file);
  const agents: BundleAgent[] = manifest.agents.map((entry) => ({
    id: entry.id,
    file: path.resolve(root, entry.file),
    ...(entry.entry_point !== undefined ? { entryPoint: entry.entry_point } : {}),
    ...(entry.tools !== undefined ? { tools: entry.tools } : {}),
  }));
  const bundle = { kind: 'bundle' as const, bundleRoot: root, agents };
  let agent: BundleAgent;
  try {
    agent = matchAgent(bundle, agentId);
  } catch (error) {
    if (!(error instanceof AgentNotFoundError)) throw error;
    // Perhaps the `<agent id>` attribute: read the heads, as the loader does, and try again.
    for (const entry of agents) {
      const head = await agentHead(entry.file).catch(() => undefined);
      if (head?.xmlId) entry.xmlId = head.xmlId;
    }
    agent = matchAgent(bundle, agentId);
  }
  return agent.tools === undefined ? undefined : [...agent.tools];
}

/** A built-in tool as inspect and validate list it: `builtin` runs as an activity, `loop` ends the turn. */
export interface BuiltinToolOffer {
  name: string;
  kind: 'builtin' | 'loop';
  /** `builtin` only: whether it reads or writes. */
  access?: 'read' | 'write';
}

/** Every built-in tool, in the order the model sees them (activity tools, then loop-breaking ones). */
export const BUILTIN_TOOLS: readonly BuiltinToolOffer[] = [
  ...TOOL_SPECS.map((spec) => ({ name: spec.name, kind: 'builtin' as const, access: spec.access })),
  ...LOOP_TOOL_SPECS.map((spec) => ({ name: spec.name, kind: 'loop' as const })),
];

/**
 * The built-in tools a session with this allow-list offers: the activity tools it lets through
 * (all of them without one), and the loop-breaking tools, which a session keeps whatever the list
 * says (only `loopBreakers: false` removes them). The skill tool only when the project has skills,
 * the command tool only when commands are on.
 */
export function offeredBuiltinTools(allowList: readonly string[] | undefined, options: { skills?: boolean; commands?: boolean } = {}): BuiltinToolOffer[] {
  const offered = new Set<string>([...offeredBuiltIns({ skills: options.skills === true, commands: options.commands === true }).map((spec) => spec.name), ...LOOP_TOOL_NAMES]);
  return BUILTIN_TOOLS.filter((tool) => offered.has(tool.name))
    .filter((tool) => allowList === undefined || tool.kind === 'loop' || allowedByPatterns(allowList, tool.name))
    .map((tool) => ({ ...tool }));
}

/**
 * Entries of an allow-list that are probably mistakes: they match no built-in tool and hold no `__`,
 * so they name no MCP tool (`<server>__<tool>`). A custom tool a worker registers could still match
 * one, and so could a `*` spanning a `__` (`git*`): validate only warns about them.
 */
export function unmatchedAllowListEntries(allowList: readonly string[]): string[] {
  return allowList.filter((entry) => !entry.includes(MCP_NAME_SEPARATOR) && !BUILTIN_TOOLS.some((tool) => allowedByPatterns([entry], tool.name)));
}
