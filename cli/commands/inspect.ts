/**
 * `loopwright inspect <bundle> [agent] [--json]`: shows an agent as a session would start it (its
 * commands, opening messages and system prompt) without calling a model, and lists every problem
 * met (missing files, refusals, variables that do not resolve) as warnings.
 */
import { inspectBundle, listProject, type BundleInspection, type ProjectListing } from '../../bundle/inspect';
import { BundleError } from '../../bundle/errors';
import type { CommandOutput } from '../output';
import type { ListToolsResult } from '../../common/offered-tools';
import { CustomToolError } from '../../activities/tools/custom-tool';
import { ToolModuleError } from '../../worker/tool-modules';
import { listAgentTools, listedToolLines } from './inspect-tools';
import { settingsFromOptions } from './settings-from-options';

/**
 * Runs the command; resolves to the exit status: 0 the agent was shown (with its warnings, if any,
 * even those that would stop a session), 1 the bundle or agent could not be loaded or parsed.
 */
export async function inspectCommand(
  bundlePath: string,
  agentId: string | undefined,
  options: { json?: boolean; listTools?: boolean; toolModule?: string[]; userSkills?: boolean; skillsFolder?: string[] },
  out: CommandOutput,
): Promise<number> {
  let inspection: BundleInspection;
  let listed: ListToolsResult | undefined;
  // The skill settings as run's flags give them (the settings table's userSkills and skillFolders).
  const skills = settingsFromOptions(options, ['userSkills', 'skillFolders']);
  try {
    // A project with several agents and no agent named: what it offers, not an error.
    if (agentId === undefined && !options.listTools) {
      const listing = await listProject(bundlePath, skills);
      if (listing.agents.length !== 1 && !listing.agents.some((a) => a.id === '')) {
        out.log(options.json ? JSON.stringify(listing, null, 2) : formatListing(listing));
        return 0;
      }
    }
    inspection = await inspectBundle(bundlePath, agentId ?? '', skills);
    if (options.listTools || (options.toolModule ?? []).length > 0) listed = await listAgentTools(inspection, bundlePath, agentId ?? '', options.toolModule ?? []);
  } catch (error) {
    if (!(error instanceof BundleError || error instanceof ToolModuleError || error instanceof CustomToolError)) throw error;
    // With --json, one object naming the failure, as every command prints.
    if (options.json) out.log(JSON.stringify({ error: error.message, type: error.name }));
    else out.error(error.message);
    return 1;
  }
  if (options.json) out.log(JSON.stringify(listed ? { ...inspection, listedTools: listed } : inspection, null, 2));
  else out.log(listed ? `${formatInspection(inspection)}\n\n${listedToolLines(listed).join('\n')}` : formatInspection(inspection));
  return 0;
}

/** The human-readable listing of a project's agents and skills. */
export function formatListing(data: ProjectListing): string {
  const lines = [`Project: ${data.projectRoot} (${data.kind})`, ''];
  if (data.warnings.length > 0) lines.push(`Warnings (${data.warnings.length}):`, ...data.warnings.map((w) => `  ! ${w}`), '');
  lines.push(`Agents (${data.agents.length}; run one with loopwright run <project> <agent> "<message>"):`);
  const width = Math.max(0, ...data.agents.map((a) => a.id.length));
  for (const agent of data.agents) {
    const who = [agent.name, agent.title].filter(Boolean).join(', ');
    lines.push(`  ${agent.id.padEnd(width)}  ${who}${agent.skill ? ' (agent skill)' : ''}`, `  ${' '.repeat(width)}    ${agent.file}`);
  }
  if (data.agents.length === 0) lines.push('  (none)');
  lines.push('');
  lines.push(...skillLines(data));
  return lines.join('\n');
}

/** The skills of a project, by the folder they were found in, and what the catalog costs. */
export function skillLines(data: { skills?: ProjectListing['skills']; catalogTokens?: number }): string[] {
  const skills = data.skills ?? [];
  const lines = [`Skills (${skills.length}${skills.length > 0 ? `; the catalog adds about ${data.catalogTokens ?? 0} tokens to the system prompt` : ''}):`];
  const byFolder = new Map<string, typeof skills>();
  for (const skill of skills) byFolder.set(skill.folder, [...(byFolder.get(skill.folder) ?? []), skill]);
  for (const [folder, inFolder] of byFolder) {
    lines.push(`  ${folder}:`);
    const width = Math.max(0, ...inFolder.map((k) => k.name.length));
    for (const skill of inFolder) lines.push(`    ${skill.name.padEnd(width)}  ${oneLine(skill.description).slice(0, 100)}${skill.hidden ? ' (hidden from the catalog)' : ''}`);
  }
  if (skills.length === 0) lines.push('  (none)');
  return lines;
}

/** The human-readable report. */
export function formatInspection(data: BundleInspection): string {
  const { agent, context } = data;
  const lines: string[] = [];
  lines.push(`Agent: ${agent.icon ? `${agent.icon} ` : ''}${agent.name}, ${agent.title}`);
  lines.push(`  id: ${agent.id}`);
  lines.push(`  file: ${agent.file} (${agent.dialect} dialect)`);
  lines.push(`Bundle: ${data.bundle.bundleRoot} (${data.bundle.kind}, ${data.bundle.agents.length} agent(s))`);
  lines.push(`  {project-root} = ${context.projectRoot}`);
  lines.push(`  {core-root} = ${context.coreRoot}`);
  lines.push(`  read roots: ${context.readRoots.join(', ')}`);
  lines.push(`  write roots: ${context.writeRoots.length > 0 ? context.writeRoots.join(', ') : '(none)'}`);
  lines.push(`  read limit: ${context.maxReadBytes} bytes`);
  lines.push('');
  if (data.warnings.length > 0) {
    lines.push(`Warnings (${data.warnings.length}):`);
    for (const warning of data.warnings) lines.push(`  ! ${warning}`);
    if (!data.sessionWouldStart) lines.push('  A session with this agent would stop at initialisation (see the lines ending "a session stops here").');
    lines.push('');
  }
  lines.push(`Persona:`);
  for (const [label, text] of Object.entries(agent.persona)) if (text) lines.push(`  ${label}: ${oneLine(text)}`);
  lines.push('');
  lines.push(`Commands (${data.commands.length}):`);
  const width = Math.max(0, ...data.commands.map((c) => c.cmd.length));
  for (const command of data.commands) {
    lines.push(`  ${command.cmd.padEnd(width)}  ${command.description}`);
    for (const t of command.targets) {
      lines.push(`  ${' '.repeat(width)}    ${t.kind}: ${t.value}${t.resolved && t.resolved !== t.value ? `\n  ${' '.repeat(width)}      -> ${t.resolved}` : ''}`);
    }
    if (command.checklist !== undefined) lines.push(`  ${' '.repeat(width)}    checklist: ${command.checklist}`);
    if (command.document !== undefined) lines.push(`  ${' '.repeat(width)}    document: ${command.document}`);
  }
  lines.push('');
  lines.push(`Variables (${Object.keys(context.variables).length}):`);
  for (const [key, value] of Object.entries(context.variables).sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`  {${key}} = ${value}`);
  }
  lines.push('');
  lines.push(...toolLines(data));
  lines.push('');
  if (data.skills !== undefined) {
    lines.push(...skillLines(data));
    lines.push('');
  }
  if (data.delegates) {
    lines.push(...delegateLines(data.delegates));
    lines.push('');
  }
  lines.push(`Initial messages (${data.messages.length}):`);
  data.messages.forEach((message, i) => {
    const label = i === 0 ? 'system prompt' : message.content.split('\n')[0];
    lines.push(`----- [${i + 1}] ${message.role}: ${i === 0 ? label : oneLine(label)}`);
    lines.push(i === 0 ? message.content : message.content.split('\n').slice(1).join('\n').replace(/^\n/, '') || '(no further text)');
  });
  return lines.join('\n');
}

/** The agents `delegate_task` may call. */
export function delegateLines(delegates: NonNullable<BundleInspection['delegates']>): string[] {
  const width = Math.max(0, ...delegates.map((d) => d.id.length));
  return [`May delegate to (${delegates.length}, with delegate_task):`, ...delegates.map((d) => `  ${d.id.padEnd(width)}  ${d.name}${d.title ? `, ${d.title}` : ''}`)];
}

/** The built-in tools offered (after the agent's allow-list) and the project's MCP servers. */
export function toolLines(data: Pick<BundleInspection, 'tools' | 'toolAllowList' | 'mcpServers' | 'mcpServersFile'>): string[] {
  const lines: string[] = [];
  const allow = data.toolAllowList ? `, by the agent's tools: ${data.toolAllowList.length > 0 ? data.toolAllowList.join(', ') : '(empty)'}` : '';
  lines.push(`Built-in tools (${data.tools.length}${allow}):`);
  const width = Math.max(0, ...data.tools.map((t) => t.name.length));
  for (const tool of data.tools) lines.push(`  ${tool.name.padEnd(width)}  ${tool.kind === 'loop' ? 'ends the turn' : tool.access}`);
  if (data.tools.length === 0) lines.push('  (none)');
  lines.push(`MCP servers (${data.mcpServersFile ?? 'no .mcp.json in the project root'}):`);
  const nameWidth = Math.max(0, ...data.mcpServers.map((s) => s.name.length));
  for (const server of data.mcpServers) {
    const how = server.transport === 'http' ? `http   ${server.url}` : `stdio  ${server.command}`;
    lines.push(`  ${server.name.padEnd(nameWidth)}  ${how}${server.disabled ? '  (disabled)' : ''}`);
  }
  if (data.mcpServers.length === 0) lines.push('  (none)');
  else lines.push('  Their tools are listed when a session starts: loopwright tools <session>.');
  return lines;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 157)}...` : flat;
}
