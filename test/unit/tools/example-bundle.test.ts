import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { initializeAgent } from '../../../bundle/initialize-agent';
import { executeTool } from '../../../activities/tools/dispatch';

const EXAMPLE = path.resolve(__dirname, '../../../bundles/requirements-facilitator');

let tmp: string;
let bundle: string;
beforeEach(async () => {
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'loopwright-example-')));
  bundle = path.join(tmp, 'requirements-facilitator');
  await fs.cp(EXAMPLE, bundle, { recursive: true, filter: (src) => !src.includes(`${path.sep}.loopwright`) });
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('example bundle', () => {
  test('example bundle: *intake runs end to end through the tools (execute_workflow, then save_output to default_output_file)', async () => {
    const { context } = await initializeAgent({ bundlePath: bundle, agentId: 'facilitator' });
    const workflow = await executeTool(context, 'execute_workflow', { workflow_path: '{bundle-root}/workflows/intake/workflow.yaml' });
    expect(workflow).toMatchObject({ success: true, workflow_name: 'intake' });
    expect(workflow.warnings).toBeUndefined();
    expect(workflow.instructions).toMatch(/<step n="1" goal="Hear the idea">/);
    expect(workflow.template).toMatch(/^# Requirements: \{\{project_name\}\}/);
    const config = workflow.config as Record<string, string>;
    expect(config.user_name).toBe('Sam');
    const outputFolder = path.join(bundle, 'docs');
    expect(config.default_output_file).toMatch(new RegExp(`^${outputFolder}/requirements-\\d{4}-\\d{2}-\\d{2}\\.md$`));

    // The model saves either with the resolved path or with variables; both land in the output folder.
    const saved = await executeTool(context, 'save_output', { file_path: config.default_output_file, content: '# Requirements: demo\n' });
    expect(saved).toMatchObject({ success: true, path: config.default_output_file, size: 21 });
    const again = await executeTool(context, 'save_output', { file_path: '{output_folder}/requirements-{date}.md', content: '# Requirements: demo\n' });
    expect(again).toEqual(saved);
    expect(await fs.readdir(outputFolder)).toEqual([path.basename(config.default_output_file)]);
  });

  test('example bundle: *summary has no template, and it can read back a saved document', async () => {
    const { context } = await initializeAgent({ bundlePath: bundle, agentId: '' });
    const workflow = await executeTool(context, 'execute_workflow', { workflow_path: '{bundle-root}/workflows/summary/workflow.yaml' });
    expect(workflow).toMatchObject({ success: true, workflow_name: 'summary', template: null });
    await executeTool(context, 'save_output', { file_path: '{output_folder}/r.md', content: 'saved' });
    await expect(executeTool(context, 'read_file', { file_path: '{output_folder}/r.md' })).resolves.toMatchObject({ success: true, content: 'saved' });
  });
});
