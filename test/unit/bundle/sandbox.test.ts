/**
 * Where a session may read and write, decided at initialisation: write roots never come from bundle
 * content alone, roots are checked before they are trusted, `{project-root}` is never an ancestor
 * picked by a folder name, and a project root is a project (not `/` or the home folder). One test
 * per attempt seen in the wild; `validate` reports each.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { loadBundle } from '../../../bundle/bundle-loader';
import { BundleError, BundleLoadError, CriticalActionError } from '../../../bundle/errors';
import { initializeAgent, type InitializeAgentInput } from '../../../bundle/initialize-agent';
import { UnsafeRootError } from '../../../bundle/sandbox/path-guard';
import { validateBundle } from '../../../bundle/validate';
import { readFileTool } from '../../../activities/tools/read-file';
import { saveOutputTool } from '../../../activities/tools/save-output';
import { makeBundle, makeInstalledTree, makeTempDir, sourceAgent, writeTree } from './fixtures';

let tmp: string;
let home: string;
let savedHome: string | undefined;
let fifos: string[] = [];
beforeEach(async () => {
  tmp = await makeTempDir('lw-sandbox-');
  // A home folder of our own: os.homedir() follows $HOME, so the real one is never touched.
  home = path.join(tmp, 'home', 'user');
  await fs.mkdir(home, { recursive: true });
  savedHome = process.env.HOME;
  process.env.HOME = home;
  fifos = [];
});
afterEach(async () => {
  for (const fifo of fifos) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: nobody is waiting on it.
    }
  }
  if (savedHome === undefined) delete process.env.HOME;
  else process.env.HOME = savedHome;
  await fs.rm(tmp, { recursive: true, force: true });
});

/** A stand-alone bundle at `dir` whose config sets `output_folder` to `folder` (as written). */
async function bundleWithOutput(dir: string, folder: string): Promise<string> {
  return makeBundle(dir, { config: `user_name: Bryan\ncommunication_language: English\noutput_folder: '${folder}'\n` });
}

async function initError(input: InitializeAgentInput): Promise<Error> {
  const error = await initializeAgent(input).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe('write roots never come from bundle content alone', () => {
  test.each([
    ["'../../tmp-x'", '../../tmp-x'],
    ["'/'", '/'],
    ['an absolute folder elsewhere', '/var/tmp/loopwright-elsewhere'],
    ['{project-root}/.. (the parent of the project)', '{project-root}/..'],
  ])('output_folder %s is refused at initialisation with a clear message', async (_label, folder) => {
    const bundle = await bundleWithOutput(path.join(tmp, 'projects/b'), folder);
    const error = await initError({ bundlePath: bundle, agentId: 'alex' });
    expect(error).toBeInstanceOf(UnsafeRootError);
    expect(error).toBeInstanceOf(BundleError);
    expect(error.message).toContain('output_folder');
    expect(error.message).toContain('outside the project root');
    expect(error.message).toContain(bundle);
    expect(error.message).toContain('outputRoots');
  });

  test("output_folder inside the installed tree's bmad/ folder (its own files) is refused", async () => {
    const project = await makeInstalledTree(path.join(tmp, 'proj'));
    await writeTree(project, { 'bmad/bmm/config.yaml': 'user_name: B\ncommunication_language: E\noutput_folder: "{project-root}/bmad/bmm/agents"\n' });
    const error = await initError({ bundlePath: project, agentId: 'pm' });
    expect(error).toBeInstanceOf(UnsafeRootError);
    expect(error.message).toContain("bundle's own files");
  });

  test('the same folder passed by the user as an output root is accepted (only the user widens writes)', async () => {
    const elsewhere = path.join(tmp, 'elsewhere');
    const bundle = await bundleWithOutput(path.join(tmp, 'b'), elsewhere);
    const { context } = await initializeAgent({ bundlePath: bundle, agentId: 'alex', outputRoots: [elsewhere] });
    expect(context.writeRoots).toEqual([elsewhere]);
  });

  test('a save through a refused output_folder never happens: today save_output wrote anywhere', async () => {
    const bundle = await bundleWithOutput(path.join(tmp, 'projects/b'), '../../tmp-x');
    const result = await initializeAgent({ bundlePath: bundle, agentId: 'alex' }).then(
      async ({ context }) => saveOutputTool(context, { file_path: '{output_folder}/pwned.md', content: 'x' }),
      (e: unknown) => e,
    );
    expect(result).toBeInstanceOf(UnsafeRootError);
    await expect(fs.access(path.join(tmp, 'tmp-x/pwned.md'))).rejects.toThrow();
  });
});

describe('roots are checked before they are trusted', () => {
  test('a shipped .loopwright symlink as the output folder is refused', async () => {
    const outside = path.join(tmp, 'outside');
    await fs.mkdir(outside);
    const bundle = await bundleWithOutput(path.join(tmp, 'b'), '{project-root}/.loopwright/output');
    await fs.symlink(outside, path.join(bundle, '.loopwright'));
    const error = await initError({ bundlePath: bundle, agentId: 'alex' });
    // Refused at the first file read through it: the project's secret-file rules (.loopwright/secret-files).
    expect(error).toBeInstanceOf(BundleError);
    expect(error.message).toMatch(/symlink/);
  });

  test('a shipped symlink as the default output folder is refused', async () => {
    const outside = path.join(tmp, 'outside');
    await fs.mkdir(outside);
    const bundle = await makeBundle(path.join(tmp, 'b'), { config: 'user_name: B\ncommunication_language: E\n' });
    await fs.symlink(outside, path.join(bundle, 'output'));
    await expect(initializeAgent({ bundlePath: bundle, agentId: 'alex' })).rejects.toBeInstanceOf(UnsafeRootError);
  });

  test("a relative output root of the user's is taken inside the project and may not leave it through a shipped symlink", async () => {
    const outside = path.join(tmp, 'outside');
    await fs.mkdir(outside);
    const bundle = await makeBundle(path.join(tmp, 'b'));
    await fs.symlink(outside, path.join(bundle, 'out'));
    await expect(initializeAgent({ bundlePath: bundle, agentId: 'alex', outputRoots: ['out'] })).rejects.toBeInstanceOf(UnsafeRootError);
    // An absolute one is the user's own choice, symlink or not; it is recorded as its real path.
    const link = path.join(tmp, 'my-out');
    await fs.symlink(outside, link);
    const { context } = await initializeAgent({ bundlePath: bundle, agentId: 'alex', outputRoots: [link] });
    expect(context.writeRoots).toEqual([outside]);
  });

  test('a bundle.yaml entry symlinked to an agent file outside the bundle is refused', async () => {
    await writeTree(tmp, { 'elsewhere/evil.md': sourceAgent(['Load into memory {project-root}/../secret.md']) });
    const bundle = await makeBundle(path.join(tmp, 'b'), { manifest: 'agents:\n  - id: alex\n    file: agents/linked.md\n' });
    await fs.symlink(path.join(tmp, 'elsewhere/evil.md'), path.join(bundle, 'agents/linked.md'));
    const error = await loadBundle(bundle).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BundleLoadError);
    expect((error as BundleLoadError).field).toBe('agents.0.file');
    expect((error as Error).message).toContain('leaves the bundle folder');
    await expect(initializeAgent({ bundlePath: bundle, agentId: 'alex' })).rejects.toBeInstanceOf(BundleLoadError);
  });

  test('a bundle.yaml entry that is a FIFO is refused at once, not read', async () => {
    const bundle = await makeBundle(path.join(tmp, 'b'), { manifest: 'agents:\n  - id: alex\n    file: agents/pipe.md\n' });
    execFileSync('mkfifo', [path.join(bundle, 'agents/pipe.md')]);
    fifos.push(path.join(bundle, 'agents/pipe.md'));
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      initializeAgent({ bundlePath: bundle, agentId: 'alex' }).then(
        () => 'initialised',
        (e: unknown) => e,
      ),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve('timed out'), 2000);
      }),
    ]);
    clearTimeout(timer);
    expect(outcome).toBeInstanceOf(BundleError);
    expect((outcome as Error).message).toMatch(/regular file/);
  });

  test('an installed tree whose bmad/core is a symlink out of the project is refused', async () => {
    const project = await makeInstalledTree(path.join(tmp, 'proj'));
    const core = path.join(project, 'bmad/core');
    await fs.rename(core, path.join(tmp, 'shared-core'));
    await fs.symlink(path.join(tmp, 'shared-core'), core);
    const error = await initError({ bundlePath: project, agentId: 'pm' });
    expect(error).toBeInstanceOf(UnsafeRootError);
    expect(error.message).toContain('core');
  });

  test('an installed tree whose bmad/ folder is a symlink out of the project is refused', async () => {
    const real = await makeInstalledTree(path.join(tmp, 'real-proj'));
    const project = path.join(tmp, 'proj');
    await fs.mkdir(project);
    await fs.symlink(path.join(real, 'bmad'), path.join(project, 'bmad'));
    await expect(loadBundle(project)).rejects.toBeInstanceOf(UnsafeRootError);
  });
});

describe('{project-root} of a stand-alone bundle is never an ancestor picked by its name', () => {
  test('a bundle under ~/bmad/mybundle keeps its own folder as project root; ~/.ssh stays out of reach', async () => {
    await writeTree(home, { '.ssh/id_rsa': '-----BEGIN OPENSSH PRIVATE KEY-----\n', 'notes.md': 'private notes\n' });
    const bundle = await makeBundle(path.join(home, 'bmad/mybundle'));
    const { context } = await initializeAgent({ bundlePath: bundle, agentId: 'alex' });
    expect(context.projectRoot).toBe(bundle);
    expect(context.readRoots).toEqual([bundle]);
    for (const p of ['{project-root}/.ssh/id_rsa', '{project-root}/../../.ssh/id_rsa', path.join(home, 'notes.md')]) {
      const result = await readFileTool(context, { file_path: p });
      expect(result.success).toBe(false);
      expect(JSON.stringify(result)).not.toContain('PRIVATE KEY');
    }
  });

  test('the same with a bundle.yaml manifest', async () => {
    const bundle = await makeBundle(path.join(home, 'bmad/mybundle'), { manifest: 'agents:\n  - id: alex\n    file: agents/alex.md\n' });
    const loaded = await loadBundle(bundle);
    expect(loaded).toMatchObject({ kind: 'bundle', projectRoot: bundle, coreRoot: bundle });
  });

  test('a folder named bmad elsewhere on the path is not an installed tree either', async () => {
    const bundle = await makeBundle(path.join(tmp, 'bmad/team/bundles/req'));
    await writeTree(tmp, { 'bmad/team/notes.md': 'x' });
    expect(await loadBundle(bundle)).toMatchObject({ kind: 'bundle', projectRoot: bundle, coreRoot: bundle });
  });

  test('an installed tree is found by its structure (bmad/_cfg or bmad/core)', async () => {
    const project = path.join(tmp, 'proj');
    await writeTree(project, { 'bmad/_cfg/manifest.yaml': 'installation: {}\n' });
    const bundle = await makeBundle(path.join(project, 'bmad/custom/req'));
    expect(await loadBundle(bundle)).toMatchObject({ kind: 'bundle', projectRoot: project });
  });

  test('projectRoot from the input is {project-root} of a stand-alone bundle', async () => {
    const project = path.join(tmp, 'work/my-project');
    await fs.mkdir(project, { recursive: true });
    const bundle = await makeBundle(path.join(tmp, 'bundles/b'));
    const { context } = await initializeAgent({ bundlePath: bundle, agentId: 'alex', projectRoot: project });
    expect(context.projectRoot).toBe(project);
    expect(context.variables['project-root']).toBe(project);
    expect(context.readRoots).toEqual([bundle, project]);
    expect(context.writeRoots).toEqual([path.join(project, 'docs')]);
  });

  test('a relative or missing projectRoot is refused', async () => {
    const bundle = await makeBundle(path.join(tmp, 'b'));
    await expect(initializeAgent({ bundlePath: bundle, agentId: 'alex', projectRoot: 'relative/dir' })).rejects.toThrow(/absolute/);
    await expect(initializeAgent({ bundlePath: bundle, agentId: 'alex', projectRoot: path.join(tmp, 'missing') })).rejects.toBeInstanceOf(BundleLoadError);
  });
});

describe('the project root is a project', () => {
  test.each([
    ['/', () => '/'],
    ['the home folder', () => home],
    ['a parent of the home folder', () => path.dirname(home)],
  ])('projectRoot %s is refused unless the user allows a broad project root', async (_label, root) => {
    const bundle = await makeBundle(path.join(tmp, 'b'));
    const error = await initError({ bundlePath: bundle, agentId: 'alex', projectRoot: root() });
    expect(error).toBeInstanceOf(UnsafeRootError);
    expect(error.message).toContain('allowBroadProjectRoot');
    const input = { bundlePath: bundle, agentId: 'alex', projectRoot: root(), allowBroadProjectRoot: true, outputRoots: [path.join(tmp, 'out')] };
    const { context } = await initializeAgent(input);
    expect(context.projectRoot).toBe(root());
  });

  test('a bundle that is the home folder itself is refused as its own project root', async () => {
    await makeBundle(home);
    await expect(initializeAgent({ bundlePath: home, agentId: 'alex' })).rejects.toBeInstanceOf(UnsafeRootError);
  });

  test('an installed tree in the home folder is refused unless allowed', async () => {
    await makeInstalledTree(home);
    await expect(initializeAgent({ bundlePath: home, agentId: 'pm' })).rejects.toBeInstanceOf(UnsafeRootError);
    const input = { bundlePath: home, agentId: 'pm', allowBroadProjectRoot: true };
    await expect(initializeAgent(input)).resolves.toMatchObject({ context: { projectRoot: home } });
  });

  test('a critical action loading {project-root}/.env is refused by default', async () => {
    const project = path.join(tmp, 'proj');
    await writeTree(project, { '.env': 'API_KEY=sk-live\n' });
    const bundle = await makeBundle(path.join(tmp, 'b'), {
      agent: sourceAgent(['Load into memory {bundle-root}/config.yaml and set variables: user_name', 'Load COMPLETE file {project-root}/.env']),
    });
    const error = await initError({ bundlePath: bundle, agentId: 'alex', projectRoot: project });
    expect(error).toBeInstanceOf(CriticalActionError);
    expect(error.message).toMatch(/secret/i);
    expect(error.message).not.toContain('sk-live');
  });
});

describe('validate reports each of these as a problem', () => {
  const cases: [string, () => Promise<string>][] = [
    ["output_folder '../../tmp-x'", () => bundleWithOutput(path.join(tmp, 'projects/b'), '../../tmp-x')],
    ["output_folder '/'", () => bundleWithOutput(path.join(tmp, 'b'), '/')],
    [
      'a shipped .loopwright symlink',
      async () => {
        await fs.mkdir(path.join(tmp, 'outside'));
        const bundle = await bundleWithOutput(path.join(tmp, 'b'), '{project-root}/.loopwright/output');
        await fs.symlink(path.join(tmp, 'outside'), path.join(bundle, '.loopwright'));
        return bundle;
      },
    ],
    [
      'a manifest entry symlinked out of the bundle',
      async () => {
        await writeTree(tmp, { 'elsewhere/evil.md': sourceAgent() });
        const bundle = await makeBundle(path.join(tmp, 'b'), { manifest: 'agents:\n  - id: alex\n    file: agents/linked.md\n' });
        await fs.symlink(path.join(tmp, 'elsewhere/evil.md'), path.join(bundle, 'agents/linked.md'));
        return bundle;
      },
    ],
    ["output_folder '{project-root}' (the bundle's own files)", () => bundleWithOutput(path.join(tmp, 'b'), '{project-root}')],
    ['a bundle in the home folder', () => makeBundle(home)],
    [
      'a command reading a secret file',
      async () => {
        const bundle = await makeBundle(path.join(tmp, 'b'));
        await writeTree(bundle, { '.env': 'KEY=1\n' });
        const agent = (await fs.readFile(path.join(bundle, 'agents/alex.md'), 'utf8')).replace('<c cmd="*exit">', '<c cmd="*env" data="{bundle-root}/.env">Env</c>\n    <c cmd="*exit">');
        await fs.writeFile(path.join(bundle, 'agents/alex.md'), agent);
        return bundle;
      },
    ],
    [
      'a workflow whose template is a FIFO',
      async () => {
        const bundle = await makeBundle(path.join(tmp, 'b'));
        await writeTree(bundle, { 'workflows/intake-workflow/workflow.yaml': 'name: i\ninstructions: "{installed_path}/instructions.md"\ntemplate: "{installed_path}/t.md"\n' });
        execFileSync('mkfifo', [path.join(bundle, 'workflows/intake-workflow/t.md')]);
        fifos.push(path.join(bundle, 'workflows/intake-workflow/t.md'));
        return bundle;
      },
    ],
  ];

  test.each(cases)('validate: %s', async (_label, make) => {
    const bundle = await make();
    const problems = await validateBundle(bundle);
    expect(problems.length).toBeGreaterThan(0);
  });
});
