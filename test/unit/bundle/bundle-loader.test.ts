import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { findAgent, loadBundle } from '../../../bundle/bundle-loader';
import { AgentNotFoundError, BundleLoadError } from '../../../bundle/errors';
import { makeBundle, makeInstalledTree, makeTempDir, writeTree } from './fixtures';

let tmp: string;
beforeEach(async () => {
  tmp = await makeTempDir();
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('bundle-loader', () => {
  test('loadBundle: a stand-alone bundle folder is its own bundle, core and project root', async () => {
    const root = await makeBundle(path.join(tmp, 'b'));
    const bundle = await loadBundle(root);
    expect(bundle).toMatchObject({ kind: 'bundle', bundleRoot: root, coreRoot: root, projectRoot: root, configPath: path.join(root, 'config.yaml') });
    expect(bundle.agents).toEqual([{ id: 'alex', file: path.join(root, 'agents/alex.md'), name: 'Alex', title: 'Requirements Facilitator', xmlId: 'requirements-workflow/agents/alex.md' }]);
  });

  test('loadBundle: a bundle inside bmad/custom/bundles takes the project and core roots of the tree', async () => {
    await makeInstalledTree(path.join(tmp, 'proj'));
    const root = await makeBundle(path.join(tmp, 'proj/bmad/custom/bundles/req'));
    const bundle = await loadBundle(root);
    expect(bundle).toMatchObject({
      kind: 'bundle',
      bundleRoot: root,
      coreRoot: path.join(tmp, 'proj/bmad/core'),
      projectRoot: path.join(tmp, 'proj'),
    });
  });

  test('loadBundle: a bundle.yaml manifest lists the agents; findAgent uses its id or the entry point', async () => {
    const manifest = `name: demo
agents:
  - id: facilitator
    name: Alex
    title: Requirements Facilitator
    file: agents/alex.md
    entry_point: true
    description: Runs intake.
`;
    const root = await makeBundle(path.join(tmp, 'b'), { manifest });
    const bundle = await loadBundle(root);
    expect(bundle.manifest?.name).toBe('demo');
    expect(bundle.agents).toHaveLength(1);
    expect(bundle.agents[0]).toMatchObject({ id: 'facilitator', entryPoint: true, description: 'Runs intake.' });
    expect((await findAgent(bundle, 'facilitator')).file).toBe(path.join(root, 'agents/alex.md'));
    expect((await findAgent(bundle, 'alex')).id).toBe('facilitator');
    expect((await findAgent(bundle, '')).id).toBe('facilitator');
    expect((await findAgent(bundle, 'facilitator')).configPath).toBe(path.join(root, 'config.yaml'));
  });

  test('loadBundle: an invalid manifest names the file and the bad field', async () => {
    const root = await makeBundle(path.join(tmp, 'b'), { manifest: 'agents:\n  - id: x\n    file: 3\n' });
    const error = await loadBundle(root).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BundleLoadError);
    expect((error as BundleLoadError).field).toBe('agents.0.file');
    expect((error as Error).message).toContain('bundle.yaml');
    expect((error as Error).message).toContain('agents.0.file');
  });

  test('loadBundle: a manifest entry pointing out of the bundle is refused', async () => {
    const root = await makeBundle(path.join(tmp, 'b'), { manifest: 'agents:\n  - id: x\n    file: ../elsewhere.md\n' });
    await expect(loadBundle(root)).rejects.toThrow('agents.0.file leaves the bundle folder');
  });

  test('loadBundle: an installed tree from the project, bmad/ or a module folder', async () => {
    const project = await makeInstalledTree(path.join(tmp, 'proj'));
    const bmad = path.join(project, 'bmad');
    for (const start of [project, bmad, path.join(bmad, 'bmm')]) {
      const bundle = await loadBundle(start);
      expect(bundle).toMatchObject({ kind: 'installed', bundleRoot: bmad, coreRoot: path.join(bmad, 'core'), projectRoot: project });
      expect(bundle.agents.map((a) => `${a.module}/${a.id}`)).toEqual(['bmm/pm', 'core/bmad-master']);
    }
    expect((await loadBundle(path.join(bmad, 'bmm'))).module).toBe('bmm');
    expect((await loadBundle(path.join(bmad, 'bmm'))).configPath).toBe(path.join(bmad, 'bmm/config.yaml'));
    expect((await loadBundle(project)).configPath).toBe(path.join(bmad, 'core/config.yaml'));
  });

  test("findAgent: in an installed tree the agent's own module config is its config", async () => {
    const project = await makeInstalledTree(path.join(tmp, 'proj'));
    const bundle = await loadBundle(project);
    const pm = await findAgent(bundle, 'pm');
    expect(pm).toMatchObject({ module: 'bmm', name: 'John', configPath: path.join(project, 'bmad/bmm/config.yaml') });
    expect((await findAgent(bundle, 'bmm/pm')).file).toBe(pm.file);
    expect((await findAgent(bundle, 'bmad/bmm/agents/john.md')).file).toBe(pm.file);
    expect((await findAgent(bundle, 'PM')).file).toBe(pm.file);
  });

  test('findAgent: an unknown id lists the available agents', async () => {
    const project = await makeInstalledTree(path.join(tmp, 'proj'));
    const error = await findAgent(await loadBundle(project), 'nobody').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentNotFoundError);
    expect((error as Error).message).toBe('Agent not found: nobody\nAvailable agents: bmm/pm, core/bmad-master');
    expect((error as AgentNotFoundError).available).toEqual(['bmm/pm', 'core/bmad-master']);
  });

  test('findAgent: the same name in two modules is ambiguous unless the bundle path chose a module', async () => {
    const project = await makeInstalledTree(path.join(tmp, 'proj'));
    await writeTree(project, { 'bmad/core/agents/pm.md': '<agent name="Other" title="PM"></agent>' });
    await expect(findAgent(await loadBundle(project), 'pm')).rejects.toThrow('Agent id is ambiguous: pm');
    expect((await findAgent(await loadBundle(path.join(project, 'bmad/core')), 'pm')).module).toBe('core');
  });

  test('findAgent: several agents and no entry point need an id', async () => {
    const root = await makeBundle(path.join(tmp, 'b'));
    await writeTree(root, { 'agents/second.md': '<agent name="S" title="T"></agent>' });
    await expect(findAgent(await loadBundle(root), '')).rejects.toThrow(AgentNotFoundError);
  });

  test('loadBundle: a missing path or a folder that is no bundle fails clearly', async () => {
    await expect(loadBundle(path.join(tmp, 'missing'))).rejects.toThrow(/^Bundle not found: .*missing/);
    await fs.mkdir(path.join(tmp, 'empty'));
    await expect(loadBundle(path.join(tmp, 'empty'))).rejects.toThrow(BundleLoadError);
    await expect(loadBundle(path.join(tmp, 'empty'))).rejects.toThrow('Not a bundle');
  });

  test('findAgent: a manifest naming a missing agent file fails naming the file', async () => {
    const root = await makeBundle(path.join(tmp, 'b'), { manifest: 'agents:\n  - id: ghost\n    file: agents/ghost.md\n' });
    await expect(findAgent(await loadBundle(root), 'ghost')).rejects.toThrow(`Agent file not found: ${path.join(root, 'agents/ghost.md')}`);
  });
});
