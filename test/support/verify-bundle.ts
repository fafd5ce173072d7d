/**
 * A small bundle whose one workflow names a checklist, for the verify phase's tests: agent `writer`
 * with `*spec` (runs the workflow, which saves `{output_folder}/spec.md`) and `*validate-spec`
 * (checks it on demand); the checklist has three items in two sections.
 */
import fs from 'node:fs';
import path from 'node:path';
import { text } from '../../fake-model/server';

const AGENT = `# Spec writer

\`\`\`xml
<agent id="spec-bundle/agents/writer.md" name="Wren" title="Spec Writer">
  <persona>
    <role>Writes short specs</role>
    <identity>Careful</identity>
    <communication_style>Brief</communication_style>
    <principles>Say what is needed.</principles>
  </persona>
  <critical-actions>
    <i>Load into memory {bundle-root}/config.yaml and set variables: user_name, output_folder</i>
  </critical-actions>
  <cmds>
    <c cmd="*help">Show the commands</c>
    <c cmd="*spec" run-workflow="{bundle-root}/workflows/spec/workflow.yaml">Write a spec</c>
    <c cmd="*validate-spec" validate-workflow="{bundle-root}/workflows/spec/workflow.yaml">Check the saved spec against its checklist</c>
    <c cmd="*exit">Goodbye</c>
  </cmds>
</agent>
\`\`\`
`;

const WORKFLOW = `name: spec
description: Write a one-page spec and save it.
config_source: "{bundle-root}/config.yaml"
output_folder: "{config_source}:output_folder"
installed_path: "{bundle-root}/workflows/spec"
instructions: "{installed_path}/instructions.md"
validation: "{installed_path}/checklist.md"
default_output_file: "{output_folder}/spec.md"
`;

const CHECKLIST = `# Spec checklist

## Content
- [ ] States the goal
- [ ] Names the users

## Form
- [ ] Has no placeholders left
`;

/** Write the bundle into `root/spec-bundle` (documents go to `root/docs`); returns the bundle folder. */
export function writeVerifyBundle(root: string): string {
  const bundle = path.join(root, 'spec-bundle');
  fs.mkdirSync(path.join(bundle, 'agents'), { recursive: true });
  fs.mkdirSync(path.join(bundle, 'workflows/spec'), { recursive: true });
  fs.writeFileSync(path.join(bundle, 'config.yaml'), 'user_name: Sam\noutput_folder: "{project-root}/docs"\n');
  fs.writeFileSync(path.join(bundle, 'agents/writer.md'), AGENT);
  fs.writeFileSync(path.join(bundle, 'workflows/spec/workflow.yaml'), WORKFLOW);
  fs.writeFileSync(path.join(bundle, 'workflows/spec/instructions.md'), 'Ask for the goal and the users, then save the spec.\n');
  fs.writeFileSync(path.join(bundle, 'workflows/spec/checklist.md'), CHECKLIST);
  return bundle;
}

/** The verifier's answer for the three items: item n passes unless it is in `failing` (with a note). */
export function verdict(failing: Record<number, string> = {}): ReturnType<typeof text> {
  return text(JSON.stringify({ items: [1, 2, 3].map((n) => ({ n, passed: !(n in failing), note: failing[n] ?? 'present' })) }));
}
