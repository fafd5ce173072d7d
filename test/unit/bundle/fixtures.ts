/** Helpers that build small bundles on disk for the bundle-runtime tests. */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** A fresh, symlink-resolved temporary folder. */
export async function makeTempDir(prefix = 'lw-bundle-'): Promise<string> {
  return fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), prefix)));
}

/** Writes `files` (relative path → content) under `root`, creating folders. */
export async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, content);
  }
}

/** The spec's config example. */
export const SPEC_CONFIG = `user_name: Bryan
output_folder: '{project-root}/docs'
communication_language: English
`;

/** A source-dialect agent with the spec's three critical actions. */
export function sourceAgent(
  actions: string[] = [
    'Load into memory {bundle-root}/config.yaml and set variables: project_name, output_folder, user_name',
    "Remember the user's name is {user_name}",
    'ALWAYS communicate in {communication_language}',
  ],
): string {
  return `# Alex

\`\`\`xml
<agent id="requirements-workflow/agents/alex.md" name="Alex" title="Requirements Facilitator" icon="🧭">
  <persona>
    <role>Requirements facilitator</role>
    <identity>Helps teams find what they need.</identity>
    <communication_style>Warm and brief.</communication_style>
    <principles>Listen first.</principles>
  </persona>
  <critical-actions>
${actions.map((a) => `    <i>${a}</i>`).join('\n')}
  </critical-actions>
  <cmds>
    <c cmd="*help">Show the commands</c>
    <c cmd="*intake-workflow" run-workflow="{bundle-root}/workflows/intake-workflow/workflow.yaml">Gather initial requirements</c>
    <c cmd="*exit">Leave</c>
  </cmds>
</agent>
\`\`\`
`;
}

/** A small but complete bundle folder: config, one agent, one workflow with a template. */
export async function makeBundle(root: string, options: { agent?: string; config?: string; manifest?: string } = {}): Promise<string> {
  const files: Record<string, string> = {
    'config.yaml': options.config ?? SPEC_CONFIG,
    'agents/alex.md': options.agent ?? sourceAgent(),
    'workflows/intake-workflow/workflow.yaml': 'name: intake-workflow\ninstructions: "{installed_path}/instructions.md"\n',
    'workflows/intake-workflow/instructions.md': '<step n="1">Ask</step>\n',
  };
  if (options.manifest !== undefined) files['bundle.yaml'] = options.manifest;
  await writeTree(root, files);
  return root;
}

/** A compiled-dialect agent for an installed tree module. */
export function compiledAgent(module: string, name: string): string {
  return `---
name: '${name.toLowerCase()}'
description: '${name}'
---

\`\`\`xml
<agent id="bmad/${module}/agents/${name.toLowerCase()}.md" name="${name}" title="${name} Title" icon="*">
<activation critical="MANDATORY">
  <step n="1">Load persona from this current agent file (already in context)</step>
  <step n="2">IMMEDIATE ACTION REQUIRED:
      - Load and read {project-root}/bmad/${module}/config.yaml NOW
      - Store ALL fields as session variables: {user_name}, {communication_language}, {output_folder}</step>
  <step n="3">Remember: user's name is {user_name}</step>
  <rules>
    - ALWAYS communicate in {communication_language}
  </rules>
</activation>
  <persona>
    <role>Role</role>
    <identity>Identity</identity>
    <communication_style>Style</communication_style>
    <principles>Principles</principles>
  </persona>
  <menu>
    <item cmd="*help">Show numbered menu</item>
    <item cmd="*run" workflow="{project-root}/bmad/${module}/workflows/run/workflow.yaml">Run it</item>
  </menu>
</agent>
\`\`\`
`;
}

/** An installed BMAD tree under `project`: modules core and bmm, each with config and one agent. */
export async function makeInstalledTree(project: string): Promise<string> {
  await writeTree(project, {
    'bmad/core/config.yaml': 'user_name: Core User\ncommunication_language: English\noutput_folder: "{project-root}/docs"\n',
    'bmad/core/agents/bmad-master.md': compiledAgent('core', 'Master'),
    'bmad/bmm/config.yaml': 'project_name: Demo\nuser_name: BMad\ncommunication_language: French\noutput_folder: "{project-root}/docs"\ndev_story_location: "{output_folder}/stories"\n',
    'bmad/bmm/agents/pm.md': compiledAgent('bmm', 'John'),
    'bmad/bmm/agents/README.md': '# Agents of this module\n',
    'bmad/_cfg/agents/ignored.md': 'not a module',
    'bmad/docs/readme.md': 'not a module either',
  });
  return project;
}
