/**
 * The model cannot change the bundle it runs for the next session: `save_output` never creates or
 * replaces a file the bundle loader would read, whatever folder a later session is pointed at (the
 * bundle root, the project root, the `bmad/` of a tree, a folder between) and whatever layout the
 * write would give it (an installed tree under a stand-alone bundle, an agent or config in a start
 * folder, another module's agent in the tree). After each refused write, loading again shows no
 * change. Ordinary documents are still written.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { saveOutputTool } from '../../activities/tools/save-output';
import { loadBundle, type LoadBundleOptions } from '../../bundle/bundle-loader';
import { initializeAgent, type InitializeAgentInput } from '../../bundle/initialize-agent';
import type { RuntimeContext } from '../../common/runtime-context';
import { compiledAgent, makeBundle, makeInstalledTree, makeTempDir, sourceAgent, writeTree } from '../unit/bundle/fixtures';

let tmp: string;
beforeEach(async () => {
  tmp = await makeTempDir('lw-self-write-');
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** An agent the model would like the next session to run. */
const EVIL_AGENT = compiledAgent('core', 'Evil');
const EVIL_CONFIG = 'user_name: Mallory\ncommunication_language: Evil\noutput_folder: "{project-root}"\n';

/** What to write at `rel`: an agent where agents go, a config elsewhere. */
function evil(rel: string): string {
  return /agents\/[^/]+\.md$/i.test(rel) ? EVIL_AGENT : rel.endsWith('bundle.yaml') || rel.endsWith('bundle.yml') ? 'agents:\n  - id: evil\n    file: docs/evil.md\n' : EVIL_CONFIG;
}

/** What a later session would find when pointed at `start`: the loader's answer with the files it names, or its error. */
async function loaderView(start: string, options: LoadBundleOptions = {}): Promise<unknown> {
  try {
    const bundle = await loadBundle(start, options);
    const agents: unknown[] = [];
    for (const agent of bundle.agents) agents.push({ id: agent.id, module: agent.module, file: agent.file, text: await fs.readFile(agent.file, 'utf8') });
    const config = bundle.configPath === undefined ? undefined : await fs.readFile(bundle.configPath, 'utf8');
    const { kind, bundleRoot, coreRoot, projectRoot, bmadRoot, configPath } = bundle;
    return { kind, bundleRoot, coreRoot, projectRoot, bmadRoot, configPath, config, agents };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** The views of every start folder, and the opening messages of the session's agent. */
async function everything(starts: [string, LoadBundleOptions][], input: InitializeAgentInput): Promise<unknown> {
  const views: unknown[] = [];
  for (const [start, options] of starts) views.push(await loaderView(start, options));
  const { messages } = await initializeAgent(input);
  return { views, messages };
}

/** Tries every write; each must be refused as a protected path and leave nothing behind. */
async function expectRefused(ctx: RuntimeContext, root: string, rels: string[]): Promise<void> {
  for (const rel of rels) {
    const file = path.join(root, rel);
    const before = await fs.readFile(file, 'utf8').catch(() => null);
    const result = await saveOutputTool(ctx, { file_path: file, content: evil(rel) });
    expect({ rel, result }).toEqual({ rel, result: expect.objectContaining({ success: false, error: expect.stringMatching(/bundle's own files|bundle loader would read/) }) });
    await expect(fs.readFile(file, 'utf8').catch(() => null)).resolves.toBe(before);
  }
}

/** A context as recorded before initialisation listed protected paths. */
function recordedBefore(ctx: RuntimeContext): RuntimeContext {
  const { protectedPaths: _protectedPaths, ...older } = ctx;
  return older;
}

describe('a stand-alone bundle that is its own project root, writing to {project-root}', () => {
  async function setUp() {
    const bundle = await makeBundle(path.join(tmp, 'b'), { config: "user_name: Bryan\ncommunication_language: English\noutput_folder: '{project-root}'\n" });
    const input = { bundlePath: bundle, agentId: 'alex' };
    return { bundle, input, ctx: (await initializeAgent(input)).context };
  }

  test('an installed tree under it (the loader prefers <start>/bmad) is never written, and loading shows no change', async () => {
    const { bundle, input, ctx } = await setUp();
    const before = await everything([[bundle, {}]], input);
    await expectRefused(ctx, bundle, ['bmad/core/config.yaml', 'bmad/core/agents/evil.md', 'bmad/bmm/agents/pm.md', 'bmad/bmm/config.yaml', 'bmad/_cfg/manifest.yaml', 'BMAD/core/config.yaml']);
    await expectRefused(recordedBefore(ctx), bundle, ['bmad/core/config.yaml', 'bmad/x/agents/evil.md']);
    await expect(everything([[bundle, {}]], input)).resolves.toEqual(before);
  });

  test('its agents, config, manifest and workflows are never written', async () => {
    const { bundle, input, ctx } = await setUp();
    const before = await everything([[bundle, {}]], input);
    await expectRefused(ctx, bundle, [
      'agents/alex.md',
      'agents/evil.md',
      'Agents/evil.md',
      'config.yaml',
      'config.yml',
      'bundle.yaml',
      'bundle.yml',
      'workflows/intake-workflow/instructions.md',
      'workflows/intake-workflow/workflow.yaml',
    ]);
    await expect(everything([[bundle, {}]], input)).resolves.toEqual(before);
  });
});

describe('a stand-alone bundle inside the project of the user, the project as output folder', () => {
  async function setUp() {
    const project = path.join(tmp, 'project');
    await writeTree(project, { 'README.md': '# Project\n' });
    const bundle = await makeBundle(path.join(project, 'tools/bundles/b'));
    const input = { bundlePath: bundle, agentId: 'alex', projectRoot: project, outputRoots: [project] };
    const starts: [string, LoadBundleOptions][] = [bundle, path.join(project, 'tools/bundles'), path.join(project, 'tools'), project].map((s) => [s, { projectRoot: project }]);
    return { project, bundle, input, starts, ctx: (await initializeAgent(input)).context };
  }

  test('agents, configs, manifests and installed trees in every start folder are never written', async () => {
    const { project, input, starts, ctx } = await setUp();
    const before = await everything(starts, input);
    const inEvery = ['agents/evil.md', 'config.yaml', 'bundle.yaml', 'bmad/core/config.yaml', 'bmad/core/agents/evil.md', 'bmad/bmm/agents/pm.md', '.loopwright/secret-files'];
    for (const folder of ['', 'tools', 'tools/bundles', 'tools/bundles/b']) {
      await expectRefused(
        ctx,
        project,
        inEvery.map((rel) => path.join(folder, rel)),
      );
      await expectRefused(
        recordedBefore(ctx),
        project,
        inEvery.map((rel) => path.join(folder, rel)),
      );
    }
    await expect(everything(starts, input)).resolves.toEqual(before);
  });

  test('ordinary documents are still written, and the loader sees no difference', async () => {
    const { project, input, starts, ctx } = await setUp();
    const before = await everything(starts, input);
    for (const rel of ['docs/prd.md', 'docs/agents-overview.md', 'docs/config.yaml', 'docs/agents/notes.md', 'docs/bundle.yaml', 'docs/bmad/x.md', 'bmad-notes.md', 'agents.md', 'tools/notes.md']) {
      const result = await saveOutputTool(ctx, { file_path: path.join(project, rel), content: 'a document\n' });
      expect({ rel, result }).toEqual({ rel, result: expect.objectContaining({ success: true, path: path.join(project, rel) }) });
    }
    await expect(everything(starts, input)).resolves.toEqual(before);
  });

  test('{output_folder} of the config (the project docs folder) takes documents', async () => {
    const { project } = await setUp();
    const bundle = path.join(project, 'tools/bundles/b');
    const { context } = await initializeAgent({ bundlePath: bundle, agentId: 'alex', projectRoot: project });
    await expect(saveOutputTool(context, { file_path: '{output_folder}/prd.md', content: '# PRD\n' })).resolves.toMatchObject({
      success: true,
      path: path.join(project, 'docs/prd.md'),
    });
  });
});

describe('a bundle inside an installed tree, the project as output folder', () => {
  async function setUp() {
    const project = await makeInstalledTree(path.join(tmp, 'proj'));
    const bundle = await makeBundle(path.join(project, 'bmad/custom/bundles/x'));
    const input = { bundlePath: bundle, agentId: 'alex', outputRoots: [project] };
    const starts: [string, LoadBundleOptions][] = [
      [bundle, {}],
      [project, {}],
      [path.join(project, 'bmad'), {}],
    ];
    return { project, input, starts, ctx: (await initializeAgent(input)).context };
  }

  test("another module's agent, a new module or the core is never written, with a context of today or one recorded before", async () => {
    const { project, input, starts, ctx } = await setUp();
    const before = await everything(starts, input);
    const writes = [
      'bmad/bmm/agents/pm.md',
      'bmad/bmm/agents/evil.md',
      'bmad/bmm/config.yaml',
      'bmad/cis/agents/evil.md',
      'bmad/core/config.yaml',
      'bmad/_cfg/agent-manifest.csv',
      'bmad/custom/bundles/x/agents/evil.md',
      'config.yaml',
      'agents/evil.md',
      'bundle.yaml',
    ];
    await expectRefused(ctx, project, writes);
    await expectRefused(recordedBefore(ctx), project, writes);
    await expect(everything(starts, input)).resolves.toEqual(before);
    await expect(saveOutputTool(ctx, { file_path: path.join(project, 'docs/architecture.md'), content: 'ok' })).resolves.toMatchObject({ success: true });
  });
});

describe('a project folder named bmad that is no installed tree', () => {
  test('nothing that would make it a tree (and widen the project to its parent) is written', async () => {
    const project = path.join(tmp, 'work/bmad');
    const bundle = await makeBundle(path.join(project, 'b'));
    const input = { bundlePath: bundle, agentId: 'alex', projectRoot: project, outputRoots: [project] };
    const starts: [string, LoadBundleOptions][] = [
      [bundle, { projectRoot: project }],
      [project, { projectRoot: project }],
    ];
    const { context } = await initializeAgent(input);
    const before = await everything(starts, input);
    const writes = ['core/config.yaml', 'core/agents/evil.md', '_cfg/manifest.yaml', 'docs/config.yaml', 'docs/agents/evil.md', 'b/bmad/core/config.yaml'];
    await expectRefused(context, project, writes);
    await expectRefused(recordedBefore(context), project, writes);
    await expect(everything(starts, input)).resolves.toEqual(before);
    expect(((await loaderView(bundle, { projectRoot: project })) as { projectRoot: string }).projectRoot).toBe(project);
    await expect(saveOutputTool(context, { file_path: path.join(project, 'docs/prd.md'), content: 'ok' })).resolves.toMatchObject({ success: true });
  });
});

describe('files the other agents and the workflows of the bundle read', () => {
  test("another agent's critical-action file and a workflow's template outside the bundle are never written", async () => {
    const project = path.join(tmp, 'project');
    await writeTree(project, {
      'docs/bob-memory.md': 'Bob remembers: be kind.\n',
      'shared/wf/workflow.yaml': 'name: shared\ninstructions: "{installed_path}/steps.md"\ntemplate: "{project-root}/shared/templates/t.md"\n',
      'shared/wf/steps.md': '<step n="1">Ask</step>\n',
      'shared/templates/t.md': '# {{title}}\n',
    });
    const bundle = await makeBundle(path.join(tmp, 'b'), {
      agent: sourceAgent().replace('<c cmd="*exit">', '<c cmd="*shared" run-workflow="{project-root}/shared/wf/workflow.yaml">Shared</c>\n    <c cmd="*exit">'),
    });
    await writeTree(bundle, {
      'agents/bob.md': sourceAgent(['Load into memory {bundle-root}/config.yaml and set variables: user_name', 'Load COMPLETE file {project-root}/docs/bob-memory.md']).replace(
        'name="Alex"',
        'name="Bob"',
      ),
    });
    const input = { bundlePath: bundle, agentId: 'alex', projectRoot: project, outputRoots: [project] };
    const bob = { ...input, agentId: 'bob' };
    const { context } = await initializeAgent(input);
    const before = await everything([[bundle, { projectRoot: project }]], bob);
    await expectRefused(context, project, ['docs/bob-memory.md', 'shared/wf/workflow.yaml', 'shared/wf/steps.md', 'shared/templates/t.md']);
    await expect(everything([[bundle, { projectRoot: project }]], bob)).resolves.toEqual(before);
    await expect(saveOutputTool(context, { file_path: path.join(project, 'docs/alex-notes.md'), content: 'ok' })).resolves.toMatchObject({ success: true });
  });
});
