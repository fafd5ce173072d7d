import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { executeWorkflowTool } from '../../../activities/tools/execute-workflow';
import { makeFixture, writeTree, type Fixture } from './fixture';

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
});
afterEach(async () => {
  await fx.cleanup();
});

describe('execute_workflow', () => {
  test('execute_workflow: loads instructions and template and resolves every variable in the config', async () => {
    const result = await executeWorkflowTool(fx.ctx, {
      workflow_path: '{bundle-root}/workflows/intake/workflow.yaml',
      user_input: { topic: 'billing' },
    });
    expect(result.success).toBe(true);
    expect(result.workflow_name).toBe('intake');
    expect(result.description).toBe('Intake for Team of Bryan');
    expect(result.instructions).toBe('<step n="1" goal="Hear the idea"><ask>What is it?</ask></step>\n');
    expect(result.template).toBe('# Requirements for {{project_name}}\n');
    expect(result.user_input).toEqual({ topic: 'billing' });
    const config = result.config as Record<string, unknown>;
    expect(config.config_source).toBe(path.join(fx.bundle, 'config.yaml'));
    expect(config.user_name).toBe('Bryan');
    expect(config.output_folder).toBe(path.join(fx.project, 'out'));
    expect(config.instructions).toBe(path.join(fx.bundle, 'workflows/intake/instructions.md'));
    expect(config.default_output_file).toMatch(new RegExp(`^${fx.project}/out/requirements-\\d{4}-\\d{2}-\\d{2}\\.md$`));
    expect(config.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect((config.variables as Record<string, string>).story_dir).toBe(path.join(fx.project, 'out/stories'));
    // Run-time placeholders are left for the model.
    expect(config.later).toBe('{{project_name}}');
  });

  test('execute_workflow: a config key the config lacks is left as written and reported as a warning', async () => {
    const result = await executeWorkflowTool(fx.ctx, { workflow_path: '{bundle-root}/workflows/intake/workflow.yaml' });
    expect((result.config as Record<string, unknown>).test_command).toBe('{config_source}:run_tests_command');
    expect(result.warnings).toEqual(['test_command: {config_source}:run_tests_command has no value']);
  });

  test('execute_workflow: template false gives a null template, and {installed_path} defaults to the workflow folder', async () => {
    const result = await executeWorkflowTool(fx.ctx, { workflow_path: '{bundle-root}/workflows/plain/workflow.yaml' });
    expect(result).toMatchObject({
      success: true,
      workflow_name: 'plain',
      description: 'No template',
      instructions: 'Just talk.\n',
      template: null,
      user_input: {},
    });
    expect(result.warnings).toBeUndefined();
  });

  test('execute_workflow: a workflow with no template key and no instructions key loads', async () => {
    await writeTree(fx.bundle, { 'workflows/bare/workflow.yaml': 'name: bare\n' });
    const result = await executeWorkflowTool(fx.ctx, { workflow_path: 'workflows/bare/workflow.yaml' });
    expect(result).toMatchObject({ success: true, workflow_name: 'bare', description: '', instructions: null, template: null });
  });

  test('execute_workflow: a missing instructions file names the workflow file and field', async () => {
    await writeTree(fx.bundle, { 'workflows/broken/workflow.yaml': 'name: broken\ninstructions: "{installed_path}/gone.md"\n' });
    const result = await executeWorkflowTool(fx.ctx, { workflow_path: '{bundle-root}/workflows/broken/workflow.yaml' });
    expect(result.success).toBe(false);
    expect(result.error).toBe(
      `Cannot read instructions of workflow ${path.join(fx.bundle, 'workflows/broken/workflow.yaml')}: ` +
        `ENOENT: no such file or directory, open '${path.join(fx.bundle, 'workflows/broken/gone.md')}'`,
    );
  });

  test('execute_workflow: an unresolved variable in a path that must be read is an error naming the key', async () => {
    await writeTree(fx.bundle, { 'workflows/odd/workflow.yaml': 'name: odd\ntemplate: "{module_code}/template.md"\n' });
    const result = await executeWorkflowTool(fx.ctx, { workflow_path: '{bundle-root}/workflows/odd/workflow.yaml' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^Config variable not found: module_code\nAvailable variables: /);
  });

  test('execute_workflow: a missing workflow reports ENOENT', async () => {
    const result = await executeWorkflowTool(fx.ctx, { workflow_path: '{bundle-root}/workflows/none/workflow.yaml' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^Cannot read workflow: ENOENT: no such file or directory/);
  });

  test('execute_workflow: a workflow.yaml that is not YAML or not a mapping is reported', async () => {
    await writeTree(fx.bundle, { 'workflows/bad/workflow.yaml': 'name: [unclosed\n', 'workflows/list/workflow.yaml': '- a\n- b\n' });
    const bad = await executeWorkflowTool(fx.ctx, { workflow_path: '{bundle-root}/workflows/bad/workflow.yaml' });
    expect(bad.error).toMatch(/^Invalid YAML in .*workflows\/bad\/workflow\.yaml: /);
    const list = await executeWorkflowTool(fx.ctx, { workflow_path: '{bundle-root}/workflows/list/workflow.yaml' });
    expect(list.error).toMatch(/expected a mapping of keys to values$/);
  });

  test('execute_workflow: a missing config_source file is a warning, and {config_source}:key falls back to the session variables', async () => {
    await writeTree(fx.bundle, {
      'workflows/alone/workflow.yaml': 'name: alone\nconfig_source: "{bundle-root}/missing.yaml"\nwho: "{config_source}:user_name"\n',
    });
    const result = await executeWorkflowTool(fx.ctx, { workflow_path: '{bundle-root}/workflows/alone/workflow.yaml' });
    expect(result.success).toBe(true);
    expect((result.config as Record<string, unknown>).who).toBe('Bryan');
    expect(result.warnings).toEqual([`config_source: config_source not found: ${path.join(fx.bundle, 'missing.yaml')}`]);
  });

  test.each([
    ['workflow_path', () => '{bundle-root}/../../outside/config.yaml'],
    ['config_source', () => 'workflows/evil-config/workflow.yaml'],
    ['instructions', () => 'workflows/evil-instructions/workflow.yaml'],
    ['template (symlink out)', () => 'workflows/evil-template/workflow.yaml'],
  ])('execute_workflow: a %s outside the roots is refused without revealing it', async (_label, workflowPath) => {
    await writeTree(fx.bundle, {
      'workflows/evil-config/workflow.yaml': `name: e\nconfig_source: "${fx.outside}/config.yaml"\n`,
      'workflows/evil-instructions/workflow.yaml': 'name: e\ninstructions: "{project-root}/../outside/secret.txt"\n',
      'workflows/evil-template/workflow.yaml': 'name: e\ntemplate: "{installed_path}/t.md"\n',
    });
    await fs.symlink(path.join(fx.outside, 'secret.txt'), path.join(fx.bundle, 'workflows/evil-template/t.md'));
    const result = await executeWorkflowTool(fx.ctx, { workflow_path: workflowPath() });
    expect(result).toEqual({ success: false, error: 'Security violation: Access denied' });
  });

  test('execute_workflow: bad arguments name the field', async () => {
    await expect(executeWorkflowTool(fx.ctx, { workflow_path: 'x', user_input: 'a string' })).resolves.toEqual({
      success: false,
      error: 'Invalid arguments for execute_workflow: user_input: expected object, received string',
    });
    await expect(executeWorkflowTool(fx.ctx, { user_input: {} })).resolves.toEqual({
      success: false,
      error: 'Invalid arguments for execute_workflow: workflow_path: required string is missing',
    });
  });

  test('execute_workflow: an instructions file over the read limit is refused', async () => {
    const result = await executeWorkflowTool({ ...fx.ctx, maxReadBytes: 20 }, { workflow_path: '{bundle-root}/workflows/plain/workflow.yaml' });
    // workflow.yaml itself is over 20 bytes, so the first file read is the one refused.
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^File too large: .*workflow\.yaml is \d+ bytes; the read limit is 20 bytes$/);
  });
});
