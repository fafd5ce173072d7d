import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { inspectCommand } from '../../../cli/commands/inspect';
import { validateCommand } from '../../../cli/commands/validate';
import { main } from '../../../cli/cli';
import { validateBundle } from '../../../bundle/validate';

const EXAMPLE = path.resolve(__dirname, '../../../bundles/requirements-facilitator');

/** Collects what a command prints. */
function capture() {
  const logs: string[] = [];
  const errors: string[] = [];
  return { out: { log: (s: string) => logs.push(s), error: (s: string) => errors.push(s) }, logs, errors };
}

let tmp: string;
beforeEach(async () => {
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'loopwright-commands-')));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** A copy of the example bundle that a test may break. */
async function copyExample(): Promise<string> {
  const dest = path.join(tmp, 'bundle');
  await fs.cp(EXAMPLE, dest, { recursive: true, filter: (src) => !src.includes(`${path.sep}.loopwright`) });
  return dest;
}

async function edit(file: string, from: string | RegExp, to: string): Promise<void> {
  const text = await fs.readFile(file, 'utf8');
  const next = text.replace(from, to);
  expect(next).not.toBe(text);
  await fs.writeFile(file, next);
}

describe('validate', () => {
  test('validate: the example bundle has no problem and exits 0', async () => {
    const { out, logs, errors } = capture();
    await expect(validateCommand(EXAMPLE, {}, out)).resolves.toBe(0);
    expect(errors).toEqual([]);
    expect(logs.join('\n')).toBe(`${EXAMPLE}: no problems (1 agent(s), 4 command(s), 2 workflow(s) checked)`);
  });

  test('validate: a command pointing at a missing workflow names the file and field and exits 1', async () => {
    const bundle = await copyExample();
    await edit(path.join(bundle, 'agents/facilitator.md'), 'workflows/summary/workflow.yaml', 'workflows/sumary/workflow.yaml');
    const { out, logs } = capture();
    await expect(validateCommand(bundle, {}, out)).resolves.toBe(1);
    const text = logs.join('\n');
    expect(text).toContain(`agents/facilitator.md  commands[*summary].workflow: File not found: workflows/sumary/workflow.yaml`);
    expect(text).toMatch(/1 problem\(s\); 1 agent\(s\), 4 command\(s\), 2 workflow\(s\) checked$/);
  });

  test('validate: a broken path inside a workflow names the workflow file and the field', async () => {
    const bundle = await copyExample();
    await edit(path.join(bundle, 'workflows/intake/workflow.yaml'), 'template: "{installed_path}/template.md"', 'template: "{installed_path}/templat.md"');
    const problems = await validateBundle(bundle);
    expect(problems).toEqual([
      {
        file: 'workflows/intake/workflow.yaml',
        field: 'template',
        message: expect.stringMatching(/^Cannot read template of workflow .*workflows\/intake\/workflow\.yaml: ENOENT: no such file or directory, open '.*templat\.md'$/),
      },
    ]);
  });

  test('validate: unresolved variables, a path out of the roots and an output outside the output folder are each reported', async () => {
    const bundle = await copyExample();
    await edit(path.join(bundle, 'workflows/summary/workflow.yaml'), 'user_name: "{config_source}:user_name"', 'user_name: "{config_source}:user_nam"');
    await edit(path.join(bundle, 'workflows/intake/workflow.yaml'), 'default_output_file: "{output_folder}/requirements-{date}.md"', 'default_output_file: "{project-root}/requirements.md"');
    await edit(path.join(bundle, 'agents/facilitator.md'), "<i>Remember the user's name is {user_name}</i>", "<i>Remember the user's name is {user_nick}</i>");
    await edit(path.join(bundle, 'agents/facilitator.md'), 'run-workflow="{bundle-root}/workflows/intake/workflow.yaml"', 'run-workflow="{bundle-root}/../../etc/workflow.yaml"');
    const { out, logs } = capture();
    await expect(validateCommand(bundle, { json: true }, out)).resolves.toBe(1);
    const report = JSON.parse(logs.join('\n'));
    expect(report.problems).toEqual(
      expect.arrayContaining([
        { file: 'agents/facilitator.md', field: 'critical-actions[1]', message: 'Variable {user_nick} does not resolve' },
        { file: 'agents/facilitator.md', field: 'commands[*intake].workflow', message: 'Path leaves the allowed roots: {bundle-root}/../../etc/workflow.yaml' },
        { file: 'workflows/summary/workflow.yaml', field: 'user_name', message: 'Variable {config_source}:user_nam does not resolve' },
        {
          file: 'workflows/intake/workflow.yaml',
          field: 'default_output_file',
          message: 'Output path is outside the output folders (docs): requirements.md',
        },
      ]),
    );
    expect(report.problems).toHaveLength(4);
    // Problems are a failure: the report names it as every --json failure does.
    expect(report).toMatchObject({ error: `4 problem(s) in ${bundle}`, type: 'BundleInvalid' });
  });

  test('validate: a malformed agent file is reported with the parse error', async () => {
    const bundle = await copyExample();
    await edit(path.join(bundle, 'agents/facilitator.md'), '</persona>', '');
    const problems = await validateBundle(bundle);
    expect(problems).toHaveLength(1);
    expect(problems[0].file).toBe('agents/facilitator.md');
    expect(problems[0].message).toMatch(/^Invalid agent file .*facilitator\.md: /);
  });

  test('validate: a missing critical file is reported and the commands are still checked', async () => {
    const bundle = await copyExample();
    await fs.rm(path.join(bundle, 'config.yaml'));
    await edit(path.join(bundle, 'agents/facilitator.md'), 'workflows/summary/workflow.yaml', 'workflows/gone/workflow.yaml');
    const problems = await validateBundle(bundle);
    expect(problems[0]).toMatchObject({
      file: 'agents/facilitator.md',
      field: 'critical-actions',
      message: expect.stringMatching(/^Critical action failed: Load into memory \{bundle-root\}\/config\.yaml[^\n]*\nError: ENOENT: no such file or directory/),
    });
    expect(problems).toContainEqual({ file: 'agents/facilitator.md', field: 'commands[*summary].workflow', message: 'File not found: workflows/gone/workflow.yaml' });
  });

  test('validate: a path that is not a bundle is one problem; a wrong number of bundles is a usage mistake (exit 2)', async () => {
    const { out, logs } = capture();
    await expect(validateCommand(path.join(tmp, 'nothing-here'), {}, out)).resolves.toBe(1);
    expect(logs.join('\n')).toMatch(/^.*nothing-here:\n {2}.*nothing-here: Bundle not found: .*nothing-here\n/);
    const none = capture();
    await expect(main(['validate'], none.out)).resolves.toBe(2);
    expect(none.errors.join('\n')).toMatch(/^error: missing required argument 'bundle'\nUsage: loopwright validate /);
    const two = capture();
    await expect(main(['validate', 'a', 'b'], two.out)).resolves.toBe(2);
    expect(two.errors.join('\n')).toContain("error: too many arguments for 'validate'");
  });
});

describe('inspect', () => {
  test('inspect: prints the agent, its commands, the initial messages and the system prompt', async () => {
    const { out, logs } = capture();
    await expect(inspectCommand(EXAMPLE, undefined, {}, out)).resolves.toBe(0);
    const text = logs.join('\n');
    expect(text).toContain('Agent: 🧭 Robin, Requirements Facilitator');
    expect(text).toMatch(/\*intake\s+Capture first requirements for a new piece of work\n\s+workflow: \{bundle-root\}\/workflows\/intake\/workflow\.yaml/);
    expect(text).toContain(`-> ${EXAMPLE}/workflows/intake/workflow.yaml`);
    expect(text).toContain('Initial messages (4):');
    expect(text).toContain('----- [1] system: system prompt\nYou are Robin, Requirements Facilitator.');
    expect(text).toContain('CRITICAL INSTRUCTIONS FOR TOOL USE:');
    expect(text).toContain(`[Critical Action] Loaded file: ${EXAMPLE}/config.yaml`);
    expect(text).toContain("[Critical Instruction] Remember the user's name is Sam");
    expect(text).toContain(`write roots: ${EXAMPLE}/docs`);
  });

  test('inspect: --json gives the parsed agent, messages and system prompt as data', async () => {
    const { out, logs } = capture();
    await expect(inspectCommand(EXAMPLE, 'facilitator', { json: true }, out)).resolves.toBe(0);
    const data = JSON.parse(logs.join('\n'));
    expect(data.agent).toMatchObject({ name: 'Robin', title: 'Requirements Facilitator', dialect: 'source' });
    expect(data.commands.map((c: { cmd: string }) => c.cmd)).toEqual(['*help', '*intake', '*summary', '*exit']);
    expect(data.messages).toHaveLength(4);
    expect(data.systemPrompt).toBe(data.messages[0].content);
    expect(data.context.variables.user_name).toBe('Sam');
    expect(data.tools).toEqual([
      { name: 'read_file', kind: 'builtin', access: 'read' },
      { name: 'execute_workflow', kind: 'builtin', access: 'read' },
      { name: 'save_output', kind: 'builtin', access: 'write' },
      { name: 'edit_file', kind: 'builtin', access: 'write' },
      { name: 'ask_question', kind: 'loop' },
      { name: 'task_completion', kind: 'loop' },
    ]);
    expect(data.toolDefinitions.map((t: { function: { name: string } }) => t.function.name)).toEqual(data.tools.map((t: { name: string }) => t.name));
    expect(data).not.toHaveProperty('toolAllowList');
    expect(data.mcpServers).toEqual([]);
  });

  test('inspect: an unknown agent prints the error with the available ids and exits 1', async () => {
    const { out, errors } = capture();
    await expect(inspectCommand(EXAMPLE, 'nobody', {}, out)).resolves.toBe(1);
    expect(errors.join('\n')).toBe('Agent not found: nobody\nAvailable agents: facilitator');
    const json = capture();
    await expect(inspectCommand(EXAMPLE, 'nobody', { json: true }, json.out)).resolves.toBe(1);
    expect(JSON.parse(json.logs.join('\n'))).toEqual({ error: 'Agent not found: nobody\nAvailable agents: facilitator', type: 'AgentNotFoundError' });
    expect(json.errors).toEqual([]);
  });
});
