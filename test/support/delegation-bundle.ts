/**
 * A small bundle of two agents for the delegation tests: `lead` (Lena, Team Lead) and `pm` (Pat,
 * Product Manager), both with a config that names `{project-root}/docs` as the output folder.
 * `delegates` writes a bundle.yaml giving each agent that `delegates:` list.
 */
import fs from 'node:fs';
import path from 'node:path';

function agent(id: string, name: string, title: string, role: string): string {
  return `# ${title}

\`\`\`xml
<agent id="team/agents/${id}.md" name="${name}" title="${title}">
  <persona>
    <role>${role}</role>
    <identity>Practical</identity>
    <communication_style>Brief</communication_style>
    <principles>Do the task asked, then answer with the result.</principles>
  </persona>
  <critical-actions>
    <i>Load into memory {bundle-root}/config.yaml and set variables: user_name, output_folder</i>
  </critical-actions>
  <cmds>
    <c cmd="*help">Show the commands</c>
    <c cmd="*exit">Goodbye</c>
  </cmds>
</agent>
\`\`\`
`;
}

/** Write the bundle into `root/team` and return its folder. */
export function writeDelegationBundle(root: string, delegates?: { lead?: string[]; pm?: string[] }): string {
  const bundle = path.join(root, 'team');
  fs.mkdirSync(path.join(bundle, 'agents'), { recursive: true });
  fs.writeFileSync(path.join(bundle, 'config.yaml'), 'user_name: Sam\noutput_folder: "{project-root}/docs"\n');
  fs.writeFileSync(path.join(bundle, 'agents/lead.md'), agent('lead', 'Lena', 'Team Lead', 'Plans the work and hands parts of it to the team'));
  fs.writeFileSync(path.join(bundle, 'agents/pm.md'), agent('pm', 'Pat', 'Product Manager', 'Writes product requirements'));
  if (delegates) {
    const entry = (id: string, list: string[] | undefined) => `  - id: ${id}\n    file: agents/${id}.md\n${list ? `    delegates: [${list.map((d) => JSON.stringify(d)).join(', ')}]\n` : ''}`;
    fs.writeFileSync(path.join(bundle, 'bundle.yaml'), `name: team\nagents:\n${entry('lead', delegates.lead)}${entry('pm', delegates.pm)}`);
  }
  return bundle;
}
