import { findUnresolved, pathVariables, resolveConfigVariables, resolveDeep, resolveVariables, resolveWithSiblings, todayLocal } from '../../../bundle/variables';
import { ConfigVariableNotFoundError, VariableCycleError } from '../../../bundle/errors';

const roots = pathVariables({ bundleRoot: '/p/bundle', coreRoot: '/p/bmad/core', projectRoot: '/p' });

describe('variables', () => {
  test('resolveVariables: replaces path variables, including the {project_root} misspelling', () => {
    expect(resolveVariables('{bundle-root}/config.yaml', roots)).toBe('/p/bundle/config.yaml');
    expect(resolveVariables('{core-root}/tasks/workflow.xml', roots)).toBe('/p/bmad/core/tasks/workflow.xml');
    expect(resolveVariables('{project-root}/a and {project_root}/b', roots)).toBe('/p/a and /p/b');
  });

  test("resolveVariables: the spec example, Remember the user's name is {user_name}", () => {
    const vars = { ...roots, user_name: 'Bryan', communication_language: 'English' };
    expect(resolveVariables("Remember the user's name is {user_name}", vars)).toBe("Remember the user's name is Bryan");
    expect(resolveVariables('ALWAYS communicate in {communication_language}', vars)).toBe('ALWAYS communicate in English');
  });

  test('resolveVariables: a config value holding a variable resolves ({project-root}/docs)', () => {
    const vars = { ...roots, output_folder: '{project-root}/docs' };
    expect(resolveVariables('{output_folder}/prd.md', vars)).toBe('/p/docs/prd.md');
  });

  test('resolveVariables: chains several deep resolve fully', () => {
    const vars = { a: '{b}/a', b: '{c}/b', c: '{d}/c', d: '{e}/d', e: '{project-root}', ...roots };
    expect(resolveVariables('{a}', vars)).toBe('/p/d/c/b/a');
  });

  test('resolveVariables: a cycle fails with VariableCycleError naming the variables', () => {
    const vars = { a: '{b}', b: '{c}', c: '{a}' };
    expect(() => resolveVariables('x {a}', vars)).toThrow(VariableCycleError);
    expect(() => resolveVariables('x {a}', vars)).toThrow('Variable cycle: a -> b -> c -> a');
    expect(() => resolveVariables('{self}', { self: '{self}/x' })).toThrow('Variable cycle: self -> self');
  });

  test('resolveVariables: double-brace placeholders are left alone', () => {
    const vars = { ...roots, story_key: 'nope', x: 'nope' };
    expect(resolveVariables('{project-root}/{{story_key}}.md and {{x}}', vars, { strict: true })).toBe('/p/{{story_key}}.md and {{x}}');
  });

  test('resolveVariables: {date} is YYYY-MM-DD, options.date or today', () => {
    expect(resolveVariables('report-{date}.md', {}, { date: '2025-10-05' })).toBe('report-2025-10-05.md');
    expect(resolveVariables('{date}', {})).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(resolveVariables('{date}', {})).toBe(todayLocal());
    // a sibling `date: system-generated` never wins over the system date
    expect(resolveVariables('{date}', { date: 'system-generated' }, { date: '2025-01-02' })).toBe('2025-01-02');
  });

  test('resolveVariables: {config_source}:key takes the key from the config source', () => {
    const configSource = { user_name: 'Bryan', output_folder: '{project-root}/docs' };
    const vars = { ...roots, config_source: '/p/bundle/config.yaml' };
    expect(resolveVariables('{config_source}:output_folder/requirements-{date}.md', vars, { configSource, date: '2025-10-05' })).toBe('/p/docs/requirements-2025-10-05.md');
    expect(resolveVariables('{config_source}', vars, { configSource })).toBe('/p/bundle/config.yaml');
    // without a config source, the key comes from vars
    expect(resolveVariables('{config_source}:user_name', { user_name: 'Ann' })).toBe('Ann');
  });

  test('resolveVariables: strict mode, the spec message for a missing config key', () => {
    const configSource = { user_name: 'Bryan', output_folder: '/docs' };
    let caught: unknown;
    try {
      resolveVariables('{config_source}:invalid_var/file.md', {}, { strict: true, configSource });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigVariableNotFoundError);
    const error = caught as ConfigVariableNotFoundError;
    expect(error.message).toBe('Config variable not found: invalid_var\nAvailable variables: output_folder, user_name');
    expect(error.key).toBe('invalid_var');
    expect(error.available).toEqual(['output_folder', 'user_name']);
    expect(error.name).toBe('ConfigVariableNotFoundError');
  });

  test('resolveVariables: strict mode, an unknown plain variable lists the sorted variables', () => {
    expect(() => resolveVariables('{nope}', { user_name: 'x', b: 'y' }, { strict: true })).toThrow('Config variable not found: nope\nAvailable variables: b, user_name');
    // also when the unknown variable sits inside another variable's value
    expect(() => resolveVariables('{a}', { a: '{missing}' }, { strict: true })).toThrow(ConfigVariableNotFoundError);
  });

  test('resolveVariables: non-strict mode leaves unknown variables as written', () => {
    expect(resolveVariables('{unknown}/x {config_source}:nokey {user_name}', { user_name: 'B' })).toBe('{unknown}/x {config_source}:nokey B');
    // a config source without the key does not fall back to vars
    expect(resolveVariables('{config_source}:user_name', { user_name: 'B' }, { configSource: {} })).toBe('{config_source}:user_name');
  });

  test('resolveVariables: text without braces, JSON-ish braces and names with odd characters stay', () => {
    expect(resolveVariables('plain text', roots)).toBe('plain text');
    expect(resolveVariables('{"a": 1} { spaced }', roots, { strict: true })).toBe('{"a": 1} { spaced }');
  });

  test('resolveDeep: resolves every string in nested objects and arrays, keeps other values', () => {
    const input = {
      path: '{project-root}/x',
      list: ['{bundle-root}', 3, { deep: '{core-root}/y' }],
      flag: true,
      nothing: null,
      '{project-root}': 'key untouched',
    };
    const out = resolveDeep(input, roots);
    expect(out).toEqual({
      path: '/p/x',
      list: ['/p/bundle', 3, { deep: '/p/bmad/core/y' }],
      flag: true,
      nothing: null,
      '{project-root}': 'key untouched',
    });
    expect(input.path).toBe('{project-root}/x');
  });

  test('findUnresolved: lists remaining single-brace variables, not {{x}}', () => {
    expect(findUnresolved('{a}/{b}/{a} {{c}} {config_source}:key {date}')).toEqual(['a', 'b', 'config_source:key', 'date']);
    expect(findUnresolved('nothing here')).toEqual([]);
  });

  test('resolveConfigVariables: scalar values stringified and resolved, keys naming keys work', () => {
    const config = {
      user_name: 'Bryan',
      output_folder: '{project-root}/docs',
      stories: '{output_folder}/stories',
      level: 3,
      enabled: false,
      nested: { ignored: true },
      list: ['ignored'],
      empty: null,
      'project-root': '/evil',
    };
    expect(resolveConfigVariables(config, roots)).toEqual({
      user_name: 'Bryan',
      output_folder: '/p/docs',
      stories: '/p/docs/stories',
      level: '3',
      enabled: 'false',
    });
  });

  test('resolveWithSiblings: workflow.yaml keys that name sibling keys resolve', () => {
    const workflow = {
      name: 'create-story',
      config_source: '{project-root}/bmad/bmm/config.yaml',
      output_folder: '{config_source}:output_folder',
      user_name: '{config_source}:user_name',
      date: 'system-generated',
      installed_path: '{project-root}/bmad/bmm/workflows/create-story',
      template: '{installed_path}/template.md',
      variables: { story_dir: '{config_source}:dev_story_location', epics_file: '{output_folder}/epics.md' },
      default_output_file: '{story_dir}/{{story_key}}.md',
      stamp: 'made {date}',
      input_file_patterns: { prd: { whole: '{output_folder}/*prd*.md' } },
    };
    const configSource = { output_folder: '{project-root}/docs', user_name: 'BMad', dev_story_location: '{project-root}/docs/stories' };
    const out = resolveWithSiblings(workflow, roots, { configSource, date: '2025-10-05' });
    expect(out.config_source).toBe('/p/bmad/bmm/config.yaml');
    expect(out.output_folder).toBe('/p/docs');
    expect(out.template).toBe('/p/bmad/bmm/workflows/create-story/template.md');
    expect(out.variables).toEqual({ story_dir: '/p/docs/stories', epics_file: '/p/docs/epics.md' });
    expect(out.default_output_file).toBe('/p/docs/stories/{{story_key}}.md');
    expect(out.stamp).toBe('made 2025-10-05');
    expect(out.date).toBe('system-generated');
    expect(out.input_file_patterns).toEqual({ prd: { whole: '/p/docs/*prd*.md' } });
  });

  test('resolveWithSiblings: a key missing from the config is reported, not mistaken for a cycle', () => {
    const workflow = { project_name: '{config_source}:project_name' };
    expect(() => resolveWithSiblings(workflow, roots, { strict: true, configSource: { user_name: 'B' } })).toThrow('Config variable not found: project_name\nAvailable variables: user_name');
    // without a config source the agent's own variable is used
    expect(resolveWithSiblings(workflow, { project_name: 'Demo' })).toEqual({ project_name: 'Demo' });
    expect(resolveWithSiblings(workflow, {})).toEqual({ project_name: '{config_source}:project_name' });
  });

  test('resolveWithSiblings: siblings override agent variables but not the protected path variables', () => {
    const out = resolveWithSiblings({ user_name: 'Wf', 'project-root': '/evil', here: '{user_name} at {project-root}' }, { ...roots, user_name: 'Agent' });
    expect(out.here).toBe('Wf at /p');
  });

  test('resolveWithSiblings: a cycle between sibling keys fails clearly', () => {
    expect(() => resolveWithSiblings({ a: '{b}/x', b: '{a}/y' }, roots)).toThrow(/^Variable cycle: b -> a -> b$/);
  });
});
