/**
 * `*.agent.yaml` agents wherever `.md` agents are found: a bundle's `agents/`, a manifest entry, an
 * installed tree, a v6 source tree (`src/` with `core/` and `modules/<m>/`, or one of its modules);
 * the same-id rule; the path guards; initialise, inspect and validate through one dispatcher.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseAgent } from '../../../bundle/agent-parser';
import { agentHead, findAgent, loadBundle } from '../../../bundle/bundle-loader';
import { AgentNotFoundError, AgentParseError, BundleLoadError } from '../../../bundle/errors';
import { initializeAgent } from '../../../bundle/initialize-agent';
import { inspectBundle } from '../../../bundle/inspect';
import { protectingEntry } from '../../../bundle/sandbox/protected-paths';
import { checkBundle } from '../../../bundle/validate';
import { compiledAgent, makeInstalledTree, makeTempDir, SPEC_CONFIG, writeTree } from './fixtures';

function yamlAgent(name: string, title: string, extra = ''): string {
  return `agent:\n  metadata:\n    id: x/${name.toLowerCase()}.md\n    name: ${name}\n    title: ${title}\n${extra}  menu:\n    - trigger: go\n      exec: "{project-root}/tasks/go.md"\n      description: Go\n`;
}

let tmp: string;
beforeEach(async () => {
  tmp = await makeTempDir('lw-source-agents-');
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('source agents', () => {
  test('a bundle lists *.agent.yaml and .md agents, with name, title and id from the metadata', async () => {
    const root = path.join(tmp, 'b');
    await writeTree(root, {
      'config.yaml': SPEC_CONFIG,
      'agents/ana.agent.yaml': yamlAgent('Ana', 'Analyst'),
      'agents/bo.agent.yml': yamlAgent('Bo', 'Builder'),
      'agents/cy.md': compiledAgent('b', 'Cy'),
      'agents/notes.yaml': 'not: an agent\n',
      'agents/README.md': '# readme',
    });
    const bundle = await loadBundle(root);
    expect(bundle.agents.map((a) => [a.id, a.name, a.title, a.xmlId])).toEqual([
      ['ana', 'Ana', 'Analyst', 'x/ana.md'],
      ['bo', 'Bo', 'Builder', 'x/bo.md'],
      ['cy', 'Cy', 'Cy Title', 'bmad/b/agents/cy.md'],
    ]);
    expect(bundle.shadowedAgents).toBeUndefined();
    expect((await findAgent(bundle, 'ana')).file).toBe(path.join(root, 'agents/ana.agent.yaml'));
    expect((await findAgent(bundle, 'x/ana.md')).id).toBe('ana');
    expect((await findAgent(bundle, 'agents/ana.agent.yaml')).id).toBe('ana');
    expect(await agentHead(path.join(root, 'agents/ana.agent.yaml'))).toEqual({ name: 'Ana', title: 'Analyst', xmlId: 'x/ana.md' });
    // a source that does not parse gives nothing here; its error comes when it is read
    await writeTree(root, { 'agents/bad.agent.yaml': 'agent: [' });
    expect(await agentHead(path.join(root, 'agents/bad.agent.yaml'))).toEqual({});
  });

  test('x.md next to x.agent.yaml: the source is listed, and validate warns about the other', async () => {
    const root = path.join(tmp, 'b');
    await writeTree(root, { 'config.yaml': SPEC_CONFIG, 'agents/ana.agent.yaml': yamlAgent('Ana', 'Analyst'), 'agents/ana.md': compiledAgent('b', 'Old') });
    const bundle = await loadBundle(root);
    expect(bundle.agents.map((a) => [a.id, a.name, path.basename(a.file)])).toEqual([['ana', 'Ana', 'ana.agent.yaml']]);
    expect(bundle.shadowedAgents).toEqual([{ file: path.join(root, 'agents/ana.md'), by: path.join(root, 'agents/ana.agent.yaml') }]);
    const report = await checkBundle(root, { projectRoot: tmp });
    expect(report.warnings).toContainEqual({
      file: 'agents/ana.md',
      field: 'file',
      message: expect.stringContaining('agents/ana.agent.yaml gives the same agent id and is used instead'),
    });
  });

  test('a manifest entry may name a *.agent.yaml; a symlinked source is not listed; an agents/ symlink out is refused', async () => {
    const root = path.join(tmp, 'b');
    await writeTree(root, {
      'bundle.yaml': 'name: demo\nagents:\n  - id: analyst\n    file: people/ana.agent.yaml\n',
      'people/ana.agent.yaml': yamlAgent('Ana', 'Analyst'),
    });
    const bundle = await loadBundle(root);
    expect(bundle.agents).toEqual([{ id: 'analyst', file: path.join(root, 'people/ana.agent.yaml'), xmlId: 'x/ana.md' }]);
    const init = await initializeAgent({ bundlePath: root, agentId: 'analyst' });
    expect(init.agent).toMatchObject({ name: 'Ana', dialect: 'yaml' });

    const other = path.join(tmp, 'c');
    await writeTree(tmp, { 'outside/evil.agent.yaml': yamlAgent('Eve', 'Evil'), 'c/config.yaml': SPEC_CONFIG });
    await fs.mkdir(path.join(other, 'agents'));
    await fs.symlink(path.join(tmp, 'outside/evil.agent.yaml'), path.join(other, 'agents/evil.agent.yaml'));
    expect((await loadBundle(other)).agents).toEqual([]);
    await fs.rm(path.join(other, 'agents'), { recursive: true });
    await fs.symlink(path.join(tmp, 'outside'), path.join(other, 'agents'));
    await expect(loadBundle(other)).rejects.toThrow(/leaves the bundle folder/);
  });

  test('an installed tree lists a *.agent.yaml in a module as <module>/<id>', async () => {
    const project = await makeInstalledTree(path.join(tmp, 'proj'));
    await writeTree(project, { 'bmad/bmm/agents/ana.agent.yaml': yamlAgent('Ana', 'Analyst', '    module: bmm\n') });
    const bundle = await loadBundle(project);
    expect(bundle.agents.find((a) => a.id === 'ana')).toMatchObject({ module: 'bmm', name: 'Ana' });
    const init = await initializeAgent({ bundlePath: project, agentId: 'bmm/ana' });
    expect(init.context.configPath).toBe(path.join(project, 'bmad/bmm/config.yaml'));
    // Loopwright's own steps load the module config through {config_source}
    expect(init.messages).toContainEqual({ role: 'system', content: expect.stringMatching(/^\[Critical Action\] Loaded file: .*bmad\/bmm\/config\.yaml/) });
    expect(init.agent.criticalActions[1]).toMatch(/^Load \{config_source\}/);
  });

  describe('a v6 source tree', () => {
    let src: string;
    beforeEach(async () => {
      src = path.join(tmp, 'repo/src');
      await writeTree(src, {
        'core/agents/boss.agent.yaml': yamlAgent('Boss', 'Master'),
        'core/_module-installer/install-config.yaml': 'code: core\n',
        'modules/demo/agents/ana.agent.yaml': yamlAgent('Ana', 'Analyst', '    module: demo\n'),
        'modules/demo/agents/ana-old.md': compiledAgent('demo', 'Old'),
        'modules/other/agents/ana.agent.yaml': yamlAgent('Ann', 'Other analyst'),
        'modules/_private/agents/hidden.agent.yaml': yamlAgent('Hid', 'Hidden'),
        'utility/models/fragments/activation-steps.xml':
          '<step n="1">Persona</step>\n<step n="2">Load {project-root}/bmad/{{module}}/config.yaml</step>\n{AGENT_SPECIFIC_STEPS}\n<step n="{MENU_STEP}">Menu</step>',
        'utility/models/fragments/handler-exec.xml': '<handler type="exec">Run the file</handler>',
      });
    });

    test('pointed at src/, a module or core: every module listed as <module>/<id>, the module pointed at preferred', async () => {
      const whole = await loadBundle(src);
      expect(whole).toMatchObject({ kind: 'source', bundleRoot: src, coreRoot: path.join(src, 'core'), projectRoot: src });
      expect(whole.module).toBeUndefined();
      expect(whole.agents.map((a) => `${a.module}/${a.id}`)).toEqual(['core/boss', 'demo/ana-old', 'demo/ana', 'other/ana']);
      await expect(findAgent(whole, 'ana')).rejects.toThrow(/ambiguous/);
      expect((await findAgent(whole, 'other/ana')).name).toBe('Ann');

      const demo = await loadBundle(path.join(src, 'modules/demo'));
      expect(demo).toMatchObject({ kind: 'source', bundleRoot: src, module: 'demo' });
      expect((await findAgent(demo, 'ana')).name).toBe('Ana');
      const core = await loadBundle(path.join(src, 'core'), { projectRoot: tmp });
      expect(core).toMatchObject({ kind: 'source', module: 'core', projectRoot: tmp });
      const error = await findAgent(core, 'nobody').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AgentNotFoundError);
      expect((error as AgentNotFoundError).available).toEqual(['core/boss', 'demo/ana', 'demo/ana-old', 'other/ana']);
    });

    test('without a project root given: the folder holding the tree when it holds an installed tree, else the tree', async () => {
      expect((await loadBundle(src)).projectRoot).toBe(src);
      await writeTree(path.join(tmp, 'repo'), { 'bmad/demo/config.yaml': 'user_name: Kim\noutput_folder: "{project-root}/docs"\n' });
      const bundle = await loadBundle(path.join(src, 'modules/demo'));
      expect(bundle).toMatchObject({ kind: 'source', bundleRoot: src, projectRoot: path.join(tmp, 'repo') });
      const inspected = await inspectBundle(path.join(src, 'modules/demo'), 'ana');
      expect(inspected.context.variables.user_name).toBe('Kim');
      expect(inspected.sessionWouldStart).toBe(true);
    });

    test('recognised by structure: modules/ without agent files, or agents alone, is no source tree', async () => {
      const empty = path.join(tmp, 'empty');
      await writeTree(empty, { 'modules/demo/agents/notes.txt': 'x', 'core/agents/readme.md': '# x' });
      await expect(loadBundle(empty)).rejects.toThrow(BundleLoadError);
      // a bundle folder (config.yaml, agents/) holding modules/ is a bundle, and its modules/<m> too
      const plain = path.join(tmp, 'plain');
      await writeTree(plain, { 'config.yaml': SPEC_CONFIG, 'agents/a.agent.yaml': yamlAgent('A', 'T'), 'modules/m/agents/b.agent.yaml': yamlAgent('B', 'T') });
      expect((await loadBundle(plain)).kind).toBe('bundle');
      expect((await loadBundle(path.join(plain, 'modules/m'))).kind).toBe('bundle');
    });

    test('initialise: compiled with the tree templates, the config loaded from the project root given, templates protected', async () => {
      const project = path.join(tmp, 'proj');
      await writeTree(project, { 'bmad/demo/config.yaml': 'user_name: Kim\ncommunication_language: English\noutput_folder: "{project-root}/docs"\n' });
      const init = await initializeAgent({ bundlePath: path.join(src, 'modules/demo'), agentId: 'ana', projectRoot: project });
      expect(init.agent.criticalActions).toEqual(['Persona', 'Load {project-root}/bmad/demo/config.yaml', 'Menu']);
      expect(init.agent.menuHandlers).toEqual([{ type: 'exec', text: 'Run the file' }]);
      expect(init.context.variables.user_name).toBe('Kim');
      expect(init.context.writeRoots).toEqual([path.join(project, 'docs')]);
      const protectedPaths = init.context.protectedPaths ?? [];
      expect(protectingEntry(path.join(src, 'utility/models/fragments/handler-exec.xml'), protectedPaths)).toBeDefined();
      expect(protectingEntry(path.join(src, 'modules/demo/agents/ana.agent.yaml'), protectedPaths)).toBeDefined();
      expect(protectingEntry(path.join(project, 'docs/prd.md'), protectedPaths)).toBeUndefined();
    });

    test('inspect and validate name the YAML file and the field of a broken source', async () => {
      const inspected = await inspectBundle(path.join(src, 'modules/demo'), 'ana');
      expect(inspected.agent.dialect).toBe('yaml');
      expect(inspected.bundle.kind).toBe('source');
      expect(inspected.systemPrompt).toContain('[exec]\nRun the file');

      const bad = path.join(src, 'modules/demo/agents/ana.agent.yaml');
      await fs.writeFile(bad, 'agent:\n  metadata: {name: A, title: T}\n  menu:\n    - description: no trigger\n');
      const error = await inspectBundle(path.join(src, 'modules/demo'), 'ana').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AgentParseError);
      expect((error as AgentParseError).message).toContain(`${bad}: agent.menu[0].trigger is missing (line 4)`);
      const report = await checkBundle(src, { projectRoot: tmp });
      expect(report.problems).toContainEqual({
        file: 'modules/demo/agents/ana.agent.yaml',
        field: 'agent.menu[0].trigger',
        message: expect.stringContaining('agent.menu[0].trigger is missing'),
      });
      expect(report.checked.agents).toBe(4);
    });
  });

  test('XML items carry checklist and document attributes', () => {
    const agent = parseAgent(
      '<agent name="N" title="T"><menu><item cmd="*v" validate-workflow="w.yaml" checklist="{project-root}/c.md" document="{output_folder}/d.md">V</item><item cmd="*x">X</item></menu></agent>',
      'a.md',
    );
    expect(agent.commands[0]).toMatchObject({ checklist: '{project-root}/c.md', document: '{output_folder}/d.md' });
    expect(agent.commands[1].checklist).toBeUndefined();
    expect(agent.commands[1].document).toBeUndefined();
  });
});
