import { executeTool } from '../../../activities/tools/dispatch';
import { TOOL_DEFINITIONS } from '../../../common/tool-definitions';
import { TOOL_NAMES } from '../../../common/tools';
import { makeFixture, type Fixture } from './fixture';

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
});
afterEach(async () => {
  await fx.cleanup();
});

describe('executeTool', () => {
  test('executeTool: an unknown tool gives the spec message', async () => {
    await expect(executeTool(fx.ctx, 'delete_everything', {})).resolves.toEqual({
      success: false,
      error: 'Unknown tool: delete_everything',
    });
    // Inherited object keys are not tools either.
    await expect(executeTool(fx.ctx, 'constructor', {})).resolves.toEqual({ success: false, error: 'Unknown tool: constructor' });
  });

  test('executeTool: routes each name to its tool', async () => {
    const read = await executeTool(fx.ctx, 'read_file', { file_path: '{bundle-root}/notes.txt' });
    expect(read).toMatchObject({ success: true, content: 'héllo wörld\n' });
    const wf = await executeTool(fx.ctx, 'execute_workflow', { workflow_path: '{bundle-root}/workflows/plain/workflow.yaml' });
    expect(wf).toMatchObject({ success: true, workflow_name: 'plain' });
    const saved = await executeTool(fx.ctx, 'save_output', { file_path: '{output_folder}/x.md', content: 'abc' });
    expect(saved).toMatchObject({ success: true, size: 3 });
    const edited = await executeTool(fx.ctx, 'edit_file', { file_path: '{output_folder}/x.md', old_text: 'b', new_text: 'B' });
    expect(edited).toMatchObject({ success: true, size: 3, replacements: 1 });
  });
});

describe('TOOL_DEFINITIONS', () => {
  test('TOOL_DEFINITIONS: one OpenAI function per tool name, parameters exactly as the spec', () => {
    expect(TOOL_DEFINITIONS.map((d) => d.function.name)).toEqual([...TOOL_NAMES]);
    const byName = Object.fromEntries(TOOL_DEFINITIONS.map((d) => [d.function.name, d]));
    for (const def of TOOL_DEFINITIONS) {
      expect(def.type).toBe('function');
      expect(def.function.description.length).toBeGreaterThan(20);
      expect(def.function.parameters).not.toHaveProperty('$schema');
      expect(def.function.parameters.type).toBe('object');
    }
    const params = (name: string) => byName[name].function.parameters as { properties: Record<string, { type: string }>; required: string[] };
    expect(Object.keys(params('read_file').properties)).toEqual(['file_path']);
    expect(params('read_file').required).toEqual(['file_path']);
    expect(Object.keys(params('execute_workflow').properties)).toEqual(['workflow_path', 'user_input']);
    expect(params('execute_workflow').required).toEqual(['workflow_path']);
    expect(params('execute_workflow').properties.user_input).toMatchObject({ type: 'object', additionalProperties: true });
    expect(Object.keys(params('save_output').properties)).toEqual(['file_path', 'content', 'mode']);
    expect(params('save_output').required).toEqual(['file_path', 'content']);
    expect(params('save_output').properties.content.type).toBe('string');
    expect(params('save_output').properties.mode).toMatchObject({ type: 'string', enum: ['replace', 'append'] });
    expect(Object.keys(params('edit_file').properties)).toEqual(['file_path', 'old_text', 'new_text', 'replace_all']);
    expect(params('edit_file').required).toEqual(['file_path', 'old_text', 'new_text']);
    expect(params('edit_file').properties.replace_all).toMatchObject({ type: 'boolean' });
  });

  test('TOOL_DEFINITIONS: survive a JSON round trip unchanged (they cross the activity boundary)', () => {
    expect(JSON.parse(JSON.stringify(TOOL_DEFINITIONS))).toEqual(TOOL_DEFINITIONS);
  });
});
